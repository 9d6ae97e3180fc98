/**
 * Writes src/tools/catalog.json, the built-in tools without their code (see src/tools/catalog.ts), from the
 * tools themselves. `test/tools/catalog_test.ts` fails when the committed file is stale.
 *
 *   deno task catalog
 *
 * @module
 */
import { catalogEntry } from "../src/tools/catalog.ts";
import { BUILTIN_TOOLS } from "../src/tools/mod.ts";

/** The committed catalog. */
export const CATALOG_FILE = new URL("../src/tools/catalog.json", import.meta.url);

/** The text catalog.json must have. */
export function catalogText(): string {
  return `${JSON.stringify(BUILTIN_TOOLS.map(catalogEntry), null, 2)}\n`;
}

if (import.meta.main) {
  await Deno.writeTextFile(CATALOG_FILE, catalogText());
  console.log(`Wrote ${CATALOG_FILE.pathname}`);
}
