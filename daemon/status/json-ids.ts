/** A JSON array of integer ids as stored in text columns; anything else reads as no ids. */
export function parseIds(json: string | null): number[] {
  if (json === null) return [];
  try {
    const value: unknown = JSON.parse(json);
    return Array.isArray(value) ? value.filter((v): v is number => Number.isInteger(v)) : [];
  } catch {
    return [];
  }
}
