// Plan arguments that name a folder, such as a ConfigMap mounted in a pod (/plans): its plan
// files are the entries ending in .yaml or .yml, in name order. Entries starting with a dot are
// skipped: the kubelet keeps a ConfigMap's real files in `..data/` and links each key to them.
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';

/** The files `args` stand for: a folder is replaced by its plan files, anything else kept as given. */
export function expandPlanArgs(args: string[]): string[] {
  return args.flatMap((arg) => {
    let isDir = false;
    try {
      isDir = statSync(arg).isDirectory();
    } catch {
      return [arg]; // missing: loading it reports the error
    }
    if (!isDir) return [arg];
    return readdirSync(arg)
      .filter((name) => !name.startsWith('.') && /\.ya?ml$/.test(name))
      .sort()
      .map((name) => path.join(arg, name))
      .filter((file) => statSync(file).isFile());
  });
}
