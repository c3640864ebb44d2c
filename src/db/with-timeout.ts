/** A promise that gives up after a bound (a D1 statement, an RPC to an object): its work is not cancelled, only no longer waited for. */

export class TimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`no answer in ${timeoutMs} ms`);
  }
}

/** `work`'s result, or a TimeoutError after `timeoutMs`; the timer is cleared either way. */
export async function withTimeout<T>(work: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(timeoutMs)), timeoutMs);
  });
  try {
    return await Promise.race([work, expired]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}
