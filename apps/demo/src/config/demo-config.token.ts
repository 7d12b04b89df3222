/** Injection token of the resolved `DemoConfig`. */
export const DEMO_CONFIG = Symbol('DemoConfig');
