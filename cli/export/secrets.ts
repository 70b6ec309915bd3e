/**
 * The `${ENV}` placeholders an export writes for secrets: reads never return a secret, so the file
 * names a variable to set instead, as apply expects them (cli/apply/notifiers-spec.ts expandSecret).
 * Names are made from the object and the field (`NOTIFIER_PAGER_ROUTING_KEY`), so they stay the same
 * from one export to the next; two that would collide get `_2`, `_3` in the export's own order.
 */
export class Placeholders {
  readonly #names = new Map<string, string>();

  /** `${NAME}` for this secret, NAME made from its parts. */
  ref(...parts: string[]): string {
    const base = parts
      .map((p) => p.toUpperCase().replace(/[^A-Z0-9]+/g, '_'))
      .join('_')
      .replace(/_+/g, '_')
      .replace(/^_|_$/g, '');
    let name = base;
    for (let n = 2; this.#names.has(name); n++) name = `${base}_${n}`;
    this.#names.set(name, parts.join(' '));
    return `\${${name}}`;
  }

  /** The variables in the order they were made, with what each holds. */
  list(): Array<{ name: string; what: string }> {
    return [...this.#names].map(([name, what]) => ({ name, what }));
  }
}
