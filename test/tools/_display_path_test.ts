import { equal } from "node:assert/strict";
import { displayPath } from "../../src/tools/_display_path.ts";

Deno.test("displayPath leaves ordinary names alone and quotes those that could pass for other text", () => {
  for (const name of ["src/a.ts", "ünïcode/名前.ts", "back\\slash.ts", "sp ace.ts", 'q"uote.ts']) {
    equal(displayPath(name), name);
  }
  const quoted: [string, string][] = [
    ["a.ts\nsrc/fake.ts", '"a.ts\\nsrc/fake.ts"'],
    ["cr\r.ts", '"cr\\r.ts"'],
    ["esc\x1b]0;title\x07.ts", '"esc\\u001b]0;title\\u0007.ts"'],
    ["csi\u009b31m.ts", '"csi\\u009b31m.ts"'],
    ["del\x7f.ts", '"del\\u007f.ts"'],
    ["bidi\u202egnp.ts", '"bidi\\u202egnp.ts"'],
    ["isolate\u2066x\u2069.ts", '"isolate\\u2066x\\u2069.ts"'],
    ["line\u2028sep.ts", '"line\\u2028sep.ts"'],
    ['"looks-quoted".ts', '"\\"looks-quoted\\".ts"'],
    // Invisible characters make two names look alike: "config.ts" and "con\u200bfig.ts".
    ["con\u200bfig.ts", '"con\\u200bfig.ts"'],
    ["tag\u{e0041}.ts", '"tag\\udb40\\udc41.ts"'],
    ["arabic\u061cmark.ts", '"arabic\\u061cmark.ts"'],
  ];
  for (const [name, shown] of quoted) {
    equal(displayPath(name), shown);
    equal(JSON.parse(shown), name, "the model gets the name back by decoding it");
  }
});
