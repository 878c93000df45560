// V8 keeps a string built by concatenation as a tree of its pieces, and a slice as a view of the
// whole it was cut from, until something flattens it. crypto.randomUUID()'s 36 characters are a
// tree of ~30 pieces (~400 bytes of heap), a container ID about as much, an RFC 3339 time a view
// plus a piece. Strings the simulator keeps for a pod's whole life are made flat once, when they
// are made: at 50,000 pods that is tens of MB.

/** `s` as one flat string (the same characters). */
export function flatString(s: string): string {
  return Buffer.from(s, 'utf8').toString('utf8');
}
