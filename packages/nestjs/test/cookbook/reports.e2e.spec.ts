import { ACME, startCookbookApp, type Caller, type CookbookApp } from './support/cookbook-app.js';
import { Gate } from './support/gate.js';
import { ReportBuilder, ReportsController, type ExportReportDto } from './reports.controller.js';

describe('cookbook: report export (SingleFlight, cached 10 minutes)', () => {
  let shop: CookbookApp;
  let builder: ReportBuilder;

  beforeAll(async () => {
    shop = await startCookbookApp({ controllers: [ReportsController], providers: [ReportBuilder] });
    builder = shop.get(ReportBuilder);
  });

  afterAll(() => shop.close());

  /** Each test asks for its own month, so that its builds are counted apart. */
  const report = (month: string, changes: Partial<ExportReportDto> = {}) => ({
    reportType: 'sales',
    from: `2026-${month}-01`,
    to: `2026-${month}-28`,
    regions: ['eu', 'us'],
    format: 'csv',
    ...changes,
  });
  const exportReport = (body: object, caller: Caller = ACME) =>
    shop.post('/reports/export', body, caller);
  const builds = (month: string) =>
    builder.builds.filter((dto) => dto.from.startsWith(`2026-${month}`)).length;

  it('builds concurrent identical exports once; every caller gets that file', async () => {
    builder.gate = new Gate();
    const first = exportReport(report('01')).then((response) => response);
    await builder.gate.entered;
    const duplicates = [1, 2, 3, 4].map(() => exportReport(report('01')).then((r) => r));
    builder.gate.open();
    builder.gate = undefined;
    const responses = await Promise.all([first, ...duplicates]);
    for (const response of responses) expect(response.body).toEqual(responses[0].body);
    expect(builds('01')).toBe(1);
    expect(shop.keys('shop:report-export:v3', 'executed')).toContainEqual(
      expect.stringMatching(/^shop:report-export:v3:acme:sales:[0-9a-f]{32}$/),
    );
  });

  it('serves a repeat from the cache: regions in another order, another trace id', async () => {
    const first = await exportReport(report('02')).set('x-request-id', 'trace-a');
    const repeat = await exportReport(report('02', { regions: ['us', 'eu'] })).set(
      'x-request-id',
      'trace-b',
    );
    expect(repeat.headers['idempotent-replayed']).toBe('true');
    expect(repeat.body).toEqual(first.body);
    expect(builds('02')).toBe(1);
  });

  it('refuses an export without a tenant (400) before building anything', async () => {
    const anonymous = await exportReport(report('03'), {});
    expect(anonymous.status).toBe(400);
    expect(anonymous.body.field).toBe('user.tenantId');
    expect(builds('03')).toBe(0);
  });

  describe('reverse tests: alike, yet different reports', () => {
    it('builds another date range', async () => {
      await exportReport(report('04'));
      await exportReport(report('04', { to: '2026-04-30' }));
      expect(builds('04')).toBe(2);
    });

    it('builds other regions, another format, another report type', async () => {
      await exportReport(report('05'));
      await exportReport(report('05', { regions: ['eu'] }));
      await exportReport(report('05', { format: 'xlsx' }));
      await exportReport(report('05', { reportType: 'refunds' }));
      expect(builds('05')).toBe(4);
    });

    it("builds another tenant's export of the same report", async () => {
      await exportReport(report('06'), { tenant: 'acme' });
      await exportReport(report('06'), { tenant: 'globex' });
      expect(builds('06')).toBe(2);
    });
  });
});
