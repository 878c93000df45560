// Values kept out of the plan (bearer tokens, webhook and receiver URLs): the plan names an
// environment variable or a file, and the value is read from it each time it is used (a mounted
// Secret rotates). Error messages name the source, never the value.

export interface SecretSources {
  env: Record<string, string | undefined>;
  readFile: (path: string) => Promise<string>;
}

/** Where a value is read from: one of the two (neither: no value). */
export interface SecretRef {
  env?: string;
  file?: string;
}

/** The value, trimmed (none when `ref` names no source), or why it cannot be had; `what` names it in errors. */
export async function readSecret(
  ref: SecretRef,
  what: string,
  from: SecretSources,
): Promise<{ value?: string; error?: string }> {
  if (ref.env) {
    const value = from.env[ref.env]?.trim();
    return value ? { value } : { error: `${what}: environment variable ${ref.env} is not set or empty` };
  }
  if (ref.file) {
    try {
      const value = (await from.readFile(ref.file)).trim();
      return value ? { value } : { error: `${what}: file ${ref.file} is empty` };
    } catch (err) {
      return { error: `${what}: cannot read ${ref.file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}` };
    }
  }
  return {};
}
