/** `expand_acl()` (include/text.php): `<a><b>` -> `['a', 'b']`. */
export function expandAcl(text: string): string[] {
  return [...text.matchAll(/<([^>]*)>/g)].map((m) => m[1] ?? '').filter((v) => v !== '');
}
