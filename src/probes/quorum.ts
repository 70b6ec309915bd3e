/**
 * How a resource's locations decide its status (docs/API.md#check-locations). A plain module so
 * that the CLI's start path can name the choices without loading TypeBox.
 */
export const QUORUMS = ['any', 'majority', 'all'] as const;
export type Quorum = (typeof QUORUMS)[number];
