/** What a command may touch of the outside world; tests pass their own. */
export interface CliIO {
  stdout: { write(s: string): unknown; isTTY?: boolean };
  stderr: { write(s: string): unknown; isTTY?: boolean };
  env: NodeJS.ProcessEnv;
}

export type OutputFormat = 'text' | 'json';

/** Flags every command accepts (docs/cli.md, "Common flags"). */
export interface CommonOptions {
  kubeconfig?: string;
  context?: string;
  output: OutputFormat;
  metricsAddress: string;
  pushgateway?: string;
  /** --kube-api-qps / --kube-api-burst: client-side API rate limit (over the plan's). */
  kubeApiQps?: number;
  kubeApiBurst?: number;
  /** --insecure-send-credentials-over-http. */
  allowCredentialsOverHttp?: boolean;
}

export interface CommandContext {
  io: CliIO;
  common: CommonOptions;
}

export const processIO: CliIO = { stdout: process.stdout, stderr: process.stderr, env: process.env };
