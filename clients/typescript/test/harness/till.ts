// A real `till serve` for the client's tests: the binary of `TILL_BIN` (default the
// repository's target/debug/till), on a SQLite database in a temporary directory. It can be
// stopped and started again on the same database and the same port: a till's network cut.

import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { TillClient } from "../../src/client.js";

/** Every scope the tests use, for the back office's token. */
export const BACK_OFFICE_SCOPES = [
  "pos.catalog.read",
  "pos.catalog.write",
  "pos.stores.write",
  "pos.promotions.read",
  "pos.promotions.write",
  "pos.coupons.write",
  "pos.staff.write",
  "pos.staff.read",
  "pos.sessions.open",
  "pos.sessions.close",
  "pos.sales.finalize",
  "pos.sales.read",
  "pos.events.read",
  "pos.fiscal.read",
];

function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "package.json"))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error("no package.json above the test");
    dir = parent;
  }
  return dir;
}

export function tillBinary(): string {
  return resolve(packageRoot(), process.env["TILL_BIN"] ?? "../../target/debug/till");
}

export class TillProcess {
  private child: ChildProcess | null = null;
  private address: string | null = null;
  /** A client with the back office's token. */
  client!: TillClient;
  token = "";

  private constructor(
    readonly dataDir: string,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  /** Starts a server on a new database and a port the system picks. */
  static async start(settings: Record<string, string> = {}): Promise<TillProcess> {
    const bin = tillBinary();
    if (!existsSync(bin)) throw new Error(`no till binary at ${bin}: build it (cargo build) or set TILL_BIN`);
    const dataDir = await mkdtemp(join(tmpdir(), "till-client-"));
    await chmod(dataDir, 0o700);
    // till refuses a TILL_* variable it does not know, such as this test's own.
    const env: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("TILL_")));
    Object.assign(env, {
      TILL_DATA_DIR: dataDir,
      TILL_DATABASE_URL: `sqlite://${join(dataDir, "till.db")}`,
      TILL_JWT_SECRET: randomBytes(32).toString("hex"),
      // The tests' durability is that of the process, not of the machine's power.
      TILL_SQLITE_SYNCHRONOUS: "normal",
      TILL_LOG: "warn,till=info,till::access=off",
      TILL_LOG_FORMAT: "text",
      ...settings,
    });
    const till = new TillProcess(dataDir, env);
    await till.launch("127.0.0.1:0");
    till.token = till.mint("client-test", BACK_OFFICE_SCOPES);
    till.client = new TillClient({ baseUrl: till.base, token: till.token });
    return till;
  }

  get base(): string {
    if (this.address === null) throw new Error("the server never started");
    return `http://${this.address}`;
  }

  get running(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** A token for `sub` with `scopes`, signed with the server's secret. */
  mint(sub: string, scopes: readonly string[], ttlSeconds = 86_400): string {
    const minted = spawnSync(tillBinary(), ["token", "--sub", sub, "--scope", scopes.join(" "), "--ttl", String(ttlSeconds)], {
      env: this.env,
      encoding: "utf8",
    });
    if (minted.status !== 0) throw new Error(`till token failed: ${minted.stderr}`);
    return minted.stdout.trim();
  }

  /** Stops the server: SIGTERM lets requests in flight finish; SIGKILL cuts them. */
  async stop(signal: "SIGTERM" | "SIGKILL" = "SIGTERM"): Promise<void> {
    const child = this.child;
    if (child === null || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((done) => child.once("exit", done));
    child.kill(signal);
    await exited;
    this.child = null;
  }

  /** Starts the server again on the same database and port. */
  async restart(): Promise<void> {
    if (this.address === null) throw new Error("the server never started");
    await this.stop();
    // The port was ours a moment ago; another process may take it in between, rarely: try a few times.
    for (let attempt = 1; ; attempt++) {
      try {
        await this.launch(this.address);
        return;
      } catch (error) {
        if (attempt >= 5) throw error;
        await new Promise((done) => setTimeout(done, 200 * attempt));
      }
    }
  }

  /** Stops the server and deletes its data. */
  async destroy(): Promise<void> {
    await this.stop();
    await rm(this.dataDir, { recursive: true, force: true });
  }

  private launch(listen: string): Promise<void> {
    const child = spawn(tillBinary(), ["serve"], { env: { ...this.env, TILL_LISTEN: listen }, stdio: ["ignore", "pipe", "pipe"] });
    this.child = child;
    return new Promise((resolveStart, reject) => {
      let log = "";
      let listening = false;
      const timer = setTimeout(() => fail(new Error(`till did not start within 60 s:\n${log}`)), 60_000);
      const fail = (error: Error): void => {
        clearTimeout(timer);
        child.kill("SIGKILL");
        reject(error);
      };
      const read = (chunk: Buffer): void => {
        if (listening) {
          for (const line of chunk.toString().split("\n")) {
            if (/\bERROR\b/.test(line)) process.stderr.write(`till: ${line}\n`);
          }
          return;
        }
        log += chunk.toString();
        const found = /till is serving addr=(\S+)/.exec(log);
        if (found?.[1] !== undefined) {
          listening = true;
          clearTimeout(timer);
          this.address = found[1];
          resolveStart();
        }
      };
      // Both streams are drained for the whole run, so that the server never blocks on a full pipe.
      child.stdout?.on("data", read);
      child.stderr?.on("data", read);
      child.once("exit", (code, signal) => {
        if (!listening) fail(new Error(`till exited (${code ?? signal}) before listening:\n${log}`));
      });
    });
  }
}

/** Runs `work` for 0..count-1 with at most `concurrency` in flight; the first error stops it. */
export async function inPool(count: number, concurrency: number, work: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  let failed: unknown = null;
  const worker = async (): Promise<void> => {
    while (next < count && failed === null) {
      const index = next++;
      try {
        await work(index);
      } catch (error) {
        failed ??= error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  if (failed !== null) throw failed;
}
