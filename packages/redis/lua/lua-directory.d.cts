/** The absolute path of the directory holding the package's Lua scripts. */
export declare const luaDirectory: string;
