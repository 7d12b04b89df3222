/** Who is calling, from the `X-Tenant-Id` / `X-User-Id` headers; what keys are scoped by. */
export interface DemoPrincipal {
  readonly tenantId: string;
  readonly userId?: string;
}

/** The request as the demo's guards leave it. */
export interface DemoRequest {
  headers: Record<string, string | string[] | undefined>;
  user?: DemoPrincipal;
  simulatedLatencyMs?: number;
}
