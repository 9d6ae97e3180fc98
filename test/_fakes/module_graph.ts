/**
 * The modules a module loads when it is imported: its static imports, transitively, as `deno info` reports
 * them, without type-only imports and without dynamic `import()` (what loads later, on demand).
 */

interface InfoDependency {
  code?: { specifier: string };
  isDynamic?: boolean;
}

interface InfoModule {
  specifier: string;
  dependencies?: InfoDependency[];
}

/** The specifiers `entry` (a file URL) loads at once, itself included. */
export async function staticModuleGraph(entry: URL): Promise<string[]> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", entry.pathname],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (output.code !== 0) throw new Error(`deno info failed: ${new TextDecoder().decode(output.stderr)}`);
  const info = JSON.parse(new TextDecoder().decode(output.stdout)) as {
    roots: string[];
    modules: InfoModule[];
    redirects?: Record<string, string>;
  };
  const bySpecifier = new Map(info.modules.map((module) => [module.specifier, module]));
  const redirects = info.redirects ?? {};
  const seen = new Set<string>();
  const pending = [...info.roots];
  while (pending.length > 0) {
    const specifier = pending.pop()!;
    const resolved = redirects[specifier] ?? specifier;
    if (seen.has(resolved)) continue;
    seen.add(resolved);
    for (const dependency of bySpecifier.get(resolved)?.dependencies ?? []) {
      if (dependency.isDynamic || dependency.code === undefined) continue;
      pending.push(dependency.code.specifier);
    }
  }
  return [...seen].sort();
}
