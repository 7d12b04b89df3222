// Where the Lua scripts are: this file's own directory. CommonJS on purpose (see
// src/scripts/lua-scripts.ts): `__dirname` needs no `import.meta`, and both `import` and
// `require()` (Jest's included) load a CommonJS file.
exports.luaDirectory = __dirname;
