// A large JSON document (`kwave plan -o json` at 50,000 pods: 4 MB) written in pieces rather than
// made whole first: one string of it, its copy with the newline, and the write's buffer would be
// the command's peak memory. The bytes are JSON.stringify's. Pure but for `write`.

/** Arrays and objects this deep or deeper are written whole: each is small (a pod's row). */
const WHOLE_BELOW_DEPTH = 4;

/** Pieces are gathered up to about this many characters before a write. */
const PIECE_CHARS = 64 * 1024;

/** Whether `v` is written whole: a scalar, a value with toJSON, or anything this deep. */
const whole = (v: unknown, depth: number) =>
  depth >= WHOLE_BELOW_DEPTH ||
  typeof v !== 'object' ||
  v === null ||
  typeof (v as { toJSON?: unknown }).toJSON === 'function';

/**
 * Writes `JSON.stringify(value)` of an object or array through `write`, in pieces of about 64 K
 * characters. For plain data: a value with `toJSON` is written whole, as JSON.stringify writes it.
 */
export function writeJsonInPieces(write: (text: string) => void, value: object): void {
  let pending = '';
  const emit = (text: string) => {
    pending += text;
    if (pending.length >= PIECE_CHARS) {
      write(pending);
      pending = '';
    }
  };
  const visit = (v: unknown, depth: number): void => {
    // As JSON.stringify: what cannot be written (undefined, a function) is null in an array.
    if (whole(v, depth)) return emit(JSON.stringify(v) ?? 'null');
    if (Array.isArray(v)) {
      emit('[');
      v.forEach((item, i) => {
        if (i > 0) emit(',');
        visit(item, depth + 1);
      });
      return emit(']');
    }
    let sep = '{';
    for (const [key, member] of Object.entries(v as object)) {
      const name = `${sep}${JSON.stringify(key)}:`;
      if (whole(member, depth + 1)) {
        const text = JSON.stringify(member);
        if (text === undefined) continue; // left out of an object, as JSON.stringify does
        emit(name + text);
      } else {
        emit(name);
        visit(member, depth + 1);
      }
      sep = ',';
    }
    emit(sep === '{' ? '{}' : '}');
  };
  visit(value, 0);
  if (pending !== '') write(pending);
}
