/**
 * A DataLoader batch whose keys fail one by one: each key's call settles on
 * its own, and a failure becomes that key's Error (DataLoader hands it to
 * that key's caller alone). With Promise.all, one upstream 400 among a
 * batch's keys would fail every field the batch serves.
 */
export function eachSettled<T>(calls: readonly Promise<T>[]): Promise<(T | Error)[]> {
  return Promise.all(calls.map((call) => call.catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))))));
}
