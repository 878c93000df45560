// Turns the switchable faults into what a request meets: an added delay, and now and then an
// error answer (500, 503, or 429 with Retry-After) in place of the real one.
import type { Faults } from '../faults.js';
import { internalError, serviceUnavailable, tooManyRequests, type ApiError } from './status.js';

/** The error to answer with instead of serving, or undefined. `random` returns [0, 1). */
export function injectedError(faults: Faults, random: () => number = Math.random): ApiError | undefined {
  if (!(faults.errorRate > 0) || random() >= faults.errorRate) return undefined;
  const codes = faults.errorCodes.length ? faults.errorCodes : [500];
  const code = codes[Math.min(codes.length - 1, Math.floor(random() * codes.length))];
  if (code === 429) return tooManyRequests(faults.retryAfterSeconds);
  if (code === 503) return serviceUnavailable();
  return internalError('simulated fault (kwave sim errorRate)');
}

export function injectedDelay(faults: Faults): Promise<void> | undefined {
  if (!(faults.latencyMs > 0)) return undefined;
  return new Promise((resolve) => setTimeout(resolve, faults.latencyMs));
}
