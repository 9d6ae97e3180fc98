/**
 * src/common/sha256.ts gives the digest crypto.subtle gives, at every length around the padding's edges
 * (one block or two for the tail, the length field's two words) and for larger inputs.
 */
import { equal } from "node:assert/strict";
import { sha256HexSync } from "../../src/common/sha256.ts";
import { sha256Hex } from "../../src/tools/_fs.ts";

async function subtleHex(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>);
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, "0")).join("");
}

Deno.test("sha256HexSync matches the published digests of the standard's examples", () => {
  const text = (value: string) => new TextEncoder().encode(value);
  equal(sha256HexSync(text("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  equal(sha256HexSync(text("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  equal(
    sha256HexSync(text("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
  );
});

Deno.test("sha256HexSync equals crypto.subtle at every length up to three blocks and beyond", async () => {
  const lengths = [...Array.from({ length: 200 }, (_, length) => length), 1000, 4095, 4096, 65_537, 300_000];
  for (const length of lengths) {
    const bytes = new Uint8Array(length);
    for (let start = 0; start < length; start += 65_536) {
      crypto.getRandomValues(bytes.subarray(start, Math.min(length, start + 65_536)));
    }
    equal(sha256HexSync(bytes), await subtleHex(bytes), `length ${length}`);
  }
});

Deno.test("sha256Hex gives the same digest below and above the size it hashes in JavaScript", async () => {
  for (const length of [16 * 1024, 16 * 1024 + 1, 1 << 20]) {
    const bytes = new Uint8Array(length).map((_, index) => (index * 31) & 0xff);
    equal(await sha256Hex(bytes), await subtleHex(bytes), `length ${length}`);
  }
});
