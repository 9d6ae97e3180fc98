/**
 * A tool worker entry that serves the test-only sandbox probes with the same runner as the real one.
 *
 * @module
 */
/// <reference no-default-lib="true" />
/// <reference lib="deno.worker" />
import { serveTools } from "../../workers/_runner.ts";
import { SANDBOX_PROBE_TOOLS } from "./sandbox_probes.ts";

serveTools(self, SANDBOX_PROBE_TOOLS);
