import { Injectable } from '@nestjs/common';

/** How many times each operation's handler really ran in this process. */
@Injectable()
export class ExecutionStats {
  private readonly executions = new Map<string, number>();

  recordExecution(operation: string): void {
    this.executions.set(operation, (this.executions.get(operation) ?? 0) + 1);
  }

  snapshot(): Record<string, number> {
    return Object.fromEntries(this.executions);
  }
}
