/**
 * The export as text: JSON with two-space indents, or YAML with no line folding (a long
 * condition stays on one line), both ending in a newline; no date or host in it, so that the same
 * daemon exported twice gives the same bytes.
 */
export async function renderSpec(doc: Record<string, unknown>, format: 'yaml' | 'json'): Promise<string> {
  if (format === 'json') return `${JSON.stringify(doc, null, 2)}\n`;
  const { stringify } = await import('yaml');
  return `# monctl export: apply it with monctl apply -f; secrets are \${NAME} placeholders (see README.md#export).\n${stringify(doc, { lineWidth: 0 })}`;
}

/** `NAME=` lines, each under a comment saying what it holds: fill them in and source the file. */
export function envTemplate(vars: Array<{ name: string; what: string }>): string {
  return vars.map((v) => `# ${v.what}\n${v.name}=\n`).join('');
}
