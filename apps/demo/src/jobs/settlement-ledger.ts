/** One settlement of a business period, as the node that ran it recorded it. */
export interface SettlementRun {
  readonly businessPeriod: string;
  readonly node: string;
  readonly settledAt: string;
}

/** Where settlements are written; the demo's is a SQL table, tests bring their own schema. */
export interface SettlementLedger {
  record(businessPeriod: string): Promise<SettlementRun>;
}

export const SETTLEMENT_LEDGER = Symbol('SettlementLedger');

/** The name of this node, written next to each run it makes. */
export const SETTLEMENT_NODE = Symbol('SettlementNode');
