/** The path (relative to `root`) of the first src/ file newer than its dist/ output or the CLI bundle, or undefined. */
export function staleSource(root: string, dir?: string, bundleTime?: number): string | undefined;
