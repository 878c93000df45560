export function skippedTests(tap: string): { reason: string; tests: string[] }[];
export function skipSummary(tap: string): string[];
