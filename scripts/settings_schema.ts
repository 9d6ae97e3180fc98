/**
 * Writes schema/settings.schema.json, the JSON Schema of mewcode's settings files, from the zod schema in
 * src/config/settings_schema.ts. `test/config/settings_schema_test.ts` fails when the committed file is stale.
 *
 *   deno run --allow-write=schema scripts/settings_schema.ts
 *
 * @module
 */
import { settingsJsonSchemaText } from "../src/config/settings_schema.ts";

/** The committed schema file. */
export const SETTINGS_SCHEMA_FILE = new URL("../schema/settings.schema.json", import.meta.url);

if (import.meta.main) {
  await Deno.writeTextFile(SETTINGS_SCHEMA_FILE, settingsJsonSchemaText());
  console.log(`Wrote ${SETTINGS_SCHEMA_FILE.pathname}`);
}
