// Admission the simulated API server applies to writes, set at run time (POST /sim/admission):
// a rule can refuse a request as an admission webhook or policy would (403 Forbidden, 422
// Invalid), or let the write happen and hold the answer back until released, so a test can kill
// a client exactly between a write and its answer instead of hoping to.
import { ApiError, failure } from './status.js';

export interface AdmissionRule {
  /** The audit verb: `patch`, `update`, `create`, `delete`. */
  verb: string;
  /** `pods`, `pods/status`, `configmaps`… */
  resource: string;
  /** Only this object; every one when absent. */
  name?: string;
  /** Refuse before the write with this code. */
  refuse?: 403 | 422;
  /** Write, then hold the answer until POST /sim/admission/release. */
  hold?: boolean;
  /** How many requests the rule applies to; without it, all. */
  times?: number;
  /** Matching requests let through untouched before the rule applies (hold a pod's second gate write, not its first). */
  skip?: number;
}

const WEBHOOK = 'deny.sim.kwave.dev';

export class Admission {
  private rules: AdmissionRule[] = [];
  private readonly waiting = new Set<() => void>();
  /** Answers held so far (held now or released). */
  heldTotal = 0;

  /** Replaces the rules (an empty list lifts them all) and releases what is held. */
  set(rules: AdmissionRule[]): void {
    this.rules = rules.map((r) => ({ ...r }));
    this.release();
  }

  get current(): { rules: AdmissionRule[]; held: number; heldTotal: number } {
    return { rules: this.rules.map((r) => ({ ...r })), held: this.waiting.size, heldTotal: this.heldTotal };
  }

  /** Lets every held answer go. */
  release(): number {
    const n = this.waiting.size;
    for (const go of [...this.waiting]) go();
    return n;
  }

  private take(
    verb: string,
    resource: string,
    name: string | undefined,
    want: (r: AdmissionRule) => boolean,
  ): AdmissionRule | undefined {
    const rule = this.rules.find(
      (r) =>
        r.verb === verb &&
        r.resource === resource &&
        (r.name === undefined || r.name === name) &&
        want(r) &&
        (r.times === undefined || r.times > 0),
    );
    if (rule?.skip) {
      rule.skip -= 1;
      return undefined;
    }
    if (rule && rule.times !== undefined) rule.times -= 1;
    return rule;
  }

  /** Throws the refusal a rule asks for, before the write. */
  admit(verb: string, resource: string, kind: string, name: string | undefined): void {
    const rule = this.take(verb, resource, name, (r) => r.refuse !== undefined);
    if (!rule) return;
    const what = `${resource.split('/')[0]} "${name ?? ''}"`;
    if (rule.refuse === 403) {
      throw new ApiError(
        failure(
          403,
          'Forbidden',
          `admission webhook "${WEBHOOK}" denied the request: ${verb} of ${what} is not allowed (simulated)`,
          { name, kind: resource.split('/')[0] },
        ),
      );
    }
    throw new ApiError(
      failure(
        422,
        'Invalid',
        `${kind} "${name ?? ''}" is invalid: spec: Invalid value: "${verb}": denied by admission policy ${WEBHOOK} (simulated)`,
        {
          name,
          kind,
          causes: [
            {
              reason: 'FieldValueInvalid',
              message: `Invalid value: "${verb}": denied by admission policy ${WEBHOOK} (simulated)`,
              field: 'spec',
            },
          ],
        },
      ),
    );
  }

  /** After the write: resolves when the answer may be sent (at once unless a rule holds it). */
  async afterWrite(verb: string, resource: string, name: string | undefined): Promise<void> {
    const rule = this.take(verb, resource, name, (r) => r.hold === true);
    if (!rule) return;
    this.heldTotal += 1;
    await new Promise<void>((resolve) => {
      const go = () => {
        this.waiting.delete(go);
        resolve();
      };
      this.waiting.add(go);
    });
  }
}
