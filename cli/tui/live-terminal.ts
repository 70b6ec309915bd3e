/**
 * Ink switches to its CI mode (no live frames, only the last one on exit)
 * when `CI` is set, deciding once when it loads. monctl renders Ink only when
 * stdout is a terminal (pipes get NDJSON), and a person at a terminal wants
 * the live view even inside a CI container, so on a terminal the variables
 * are hidden from Ink. Import this before 'ink' in every module that uses it.
 */
if (process.stdout.isTTY) {
  delete process.env.CI;
  delete process.env.CONTINUOUS_INTEGRATION;
}
export {};
