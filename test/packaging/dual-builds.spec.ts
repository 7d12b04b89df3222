import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const fixture = fileURLToPath(new URL('./fixtures/dual-builds.mjs', import.meta.url));

interface AppReport {
  readonly statuses: number[];
  readonly bodies: unknown[];
  readonly secondReplayed: string | null;
  readonly executions: number;
}

interface DualBuildReport {
  readonly errors: Record<string, unknown>;
  readonly esmModuleCjsDecorators: AppReport;
  readonly cjsModuleEsmDecorators: AppReport;
}

/**
 * The dual-package hazard: an app that ends up with both builds of a package (a CommonJS app
 * importing one oncely package as ESM, a test runner loading the other format) runs two copies
 * of every module, so two of every class. oncely's decision: nothing that crosses between the
 * copies depends on their identity. Errors are recognised by `instanceof` across copies (a brand
 * shared through `Symbol.for`, see `OncelyError`), state decorators leave for the module is keyed
 * by strings and `Symbol.for` symbols, and adapters are checked by shape. What stays per copy is
 * what Nest itself keys by class: `OncelyModule` is imported once, from either build.
 */
describe('an app loading both the CommonJS and the ESM build', () => {
  let report: DualBuildReport;

  beforeAll(async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [fixture], {
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    report = JSON.parse(stdout) as DualBuildReport;
  });

  it('really runs two copies of @oncely/core', () => {
    expect(report.errors.twoCopies).toBe(true);
  });

  it("recognises the other build's errors by their class and every base class", () => {
    expect(report.errors).toMatchObject({
      cjsErrorIsEsmClass: true,
      cjsErrorIsEsmBaseClass: true,
      cjsErrorIsEsmOncelyError: true,
      esmErrorIsCjsClass: true,
    });
  });

  it('still tells unrelated oncely errors and other errors apart', () => {
    expect(report.errors.cjsErrorIsUnrelatedEsmClass).toBe(false);
    expect(report.errors.plainErrorIsEsmOncelyError).toBe(false);
  });

  it("maps an error of the CommonJS build to the ESM build's problem response", () => {
    expect(report.errors.esmProblemOfCjsError).toMatchObject({
      status: 409,
      headers: { 'retry-after': '2' },
      body: { type: 'urn:oncely:problem:request-in-flight', status: 409 },
    });
  });

  it.each(['esmModuleCjsDecorators', 'cjsModuleEsmDecorators'] as const)(
    'protects a route decorated by one build under OncelyModule from the other (%s)',
    (app) => {
      expect(report[app]).toEqual({
        statuses: [201, 201],
        bodies: [{ order: 1 }, { order: 1 }],
        secondReplayed: 'true',
        executions: 1,
      });
    },
  );
});
