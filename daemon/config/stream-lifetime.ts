/**
 * `--stream-max-lifetime` unless set (a file of its own so that reading the
 * settings loads nothing more). An hour of a stream costs its client one
 * reconnect, and bounds what no notification reaches (stream-guard.ts).
 */
export const DEFAULT_STREAM_MAX_LIFETIME_MS = 60 * 60 * 1000;
