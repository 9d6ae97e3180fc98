/**
 * The shell's worker (Bash): started with the shell profile's permissions (one program to run, nothing
 * else), it loads only the code that runs its commands, and keeps their sandbox for as long as it lives
 * (`ShellHost`: it ends when the worker does).
 *
 * @module
 */
/// <reference no-default-lib="true" />
/// <reference lib="deno.worker" />
import { bashRunner } from "../src/tools/_bash_run.ts";
import { ShellHost } from "../src/tools/_shell_host.ts";
import { serveTools } from "./_runner.ts";

serveTools(self, [bashRunner], { shellRunner: new ShellHost() });
