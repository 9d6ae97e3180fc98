import { equal, throws } from "node:assert/strict";
import { BundleError, hideChunkImports, rewriteForBundle } from "../../scripts/bundle.ts";

Deno.test("bundle: a lazy import's URL becomes an import() the bundler follows, type arguments and all", () => {
  const source = `const { runDoctor } = await lazyImport<typeof import("./src/cli/doctor_command.ts")>(
  new URL("./src/cli/doctor_command.ts", import.meta.url),
);
const loadLoop = lazyModule<typeof import("../agent/loop.ts")>(new URL("../agent/loop.ts", import.meta.url));
const screen = lazyImport(new URL("./repository_screen.ts", import.meta.url));`;
  equal(
    rewriteForBundle("src/session/open_session.ts", source),
    `const { runDoctor } = await lazyImport<typeof import("./src/cli/doctor_command.ts")>(
  () => import("./src/cli/doctor_command.ts"),
);
const loadLoop = lazyModule<typeof import("../agent/loop.ts")>(() => import("../agent/loop.ts"));
const screen = lazyImport(() => import("./repository_screen.ts"));`,
  );
});

Deno.test("bundle: a worker entry's URL names its bundled file, a folder's the same folder seen from bundle/", () => {
  equal(
    rewriteForBundle(
      "src/execution/worker_pool.ts",
      `const URLS = { shell: new URL("../../workers/shell_worker.ts", import.meta.url) };`,
    ),
    `const URLS = { shell: new URL("./shell_worker.js", import.meta.url) };`,
  );
  equal(
    rewriteForBundle(
      "src/execution/runtime.ts",
      `const PROGRAM = new URL("../../", import.meta.url).pathname;`,
    ),
    `const PROGRAM = new URL("../", import.meta.url).pathname;`,
  );
  equal(
    rewriteForBundle("src/execution/runtime.ts", `const SCHEMA = new URL("../../schema/", import.meta.url);`),
    `const SCHEMA = new URL("../schema/", import.meta.url);`,
  );
});

Deno.test("bundle: a use of import.meta.url whose meaning in the bundle is unknown fails the build", () => {
  // A module URL handed to something other than lazyImport: in the bundle it would name a file not there.
  throws(
    () =>
      rewriteForBundle(
        "src/a.ts",
        `const text = await Deno.readTextFile(new URL("./prompt.ts", import.meta.url));`,
      ),
    BundleError,
  );
  throws(() => rewriteForBundle("src/a.ts", `new URL("./notes.md", import.meta.url)`), BundleError);
  throws(
    () => rewriteForBundle("src/a.ts", `new URL("../../workers/_runner.ts", import.meta.url)`),
    BundleError,
  );
  throws(() => rewriteForBundle("src/a.ts", `new URL("../../../", import.meta.url)`), BundleError);
});

Deno.test("bundle: the bundler's chunk imports are hidden from Deno's module graph; a chunk not built fails", () => {
  const names = new Set(["main.js", "loop-ABC.js"]);
  equal(
    hideChunkImports(`a=()=>import("./loop-ABC.js");import{b}from"./chunk-X.js";`, names),
    `a=()=>import(new URL("./loop-ABC.js",import.meta.url).href);import{b}from"./chunk-X.js";`,
  );
  throws(() => hideChunkImports(`import("./gone-123.js")`, names), BundleError);
});
