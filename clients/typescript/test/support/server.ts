// A real `till serve` for the test: the binary of `TILL_BIN` (default the repository's
// target/debug/till), on a SQLite database in a temporary directory, on a port the system
// picks, with a back-office token minted by `till token` for the scopes the test uses.

import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { Agent, request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const SCOPES = [
  "pos.catalog.read",
  "pos.catalog.write",
  "pos.stores.write",
  "pos.promotions.read",
  "pos.promotions.write",
  "pos.coupons.write",
  "pos.customers.write",
  "pos.sales.finalize",
  "pos.staff.write",
  "pos.sessions.open",
].join(" ");

export interface Answer {
  status: number;
  body: unknown;
}

export interface Server {
  base: string;
  /** A bearer token with every scope the test uses. */
  token: string;
  request(method: string, path: string, body?: unknown, token?: string): Promise<Answer>;
  /** Like `request`, but a status other than 2xx fails. */
  ok<T>(method: string, path: string, body?: unknown, token?: string): Promise<T>;
  stop(): Promise<void>;
}

/** The package's directory (clients/typescript), wherever the compiled test runs from. */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "package.json"))) {
    const parent = dirname(dir);
    if (parent === dir) {
      throw new Error("no package.json above the test");
    }
    dir = parent;
  }
  return dir;
}

export function tillBinary(): string {
  return resolve(packageRoot(), process.env["TILL_BIN"] ?? "../../target/debug/till");
}

export async function startServer(): Promise<Server> {
  const bin = tillBinary();
  if (!existsSync(bin)) {
    throw new Error(`no till binary at ${bin}: build it (cargo build) or set TILL_BIN`);
  }
  const dataDir = await mkdtemp(join(tmpdir(), "till-pricing-"));
  await chmod(dataDir, 0o700);
  // till refuses a TILL_* variable it does not know, such as this test's own settings.
  const env: NodeJS.ProcessEnv = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith("TILL_")),
  );
  Object.assign(env, {
    TILL_DATA_DIR: dataDir,
    TILL_DATABASE_URL: `sqlite://${join(dataDir, "till.db")}`,
    TILL_LISTEN: "127.0.0.1:0",
    TILL_JWT_SECRET: randomBytes(32).toString("hex"),
    // Provisioning is thousands of writes; their durability does not matter here.
    TILL_SQLITE_SYNCHRONOUS: "normal",
    // The line saying where it listens, and warnings; not one access line per request.
    TILL_LOG: "warn,till=info,till::access=off",
    TILL_LOG_FORMAT: "text",
  });
  const child = spawn(bin, ["serve"], { env, stdio: ["ignore", "pipe", "pipe"] });
  const base = await listeningAddress(child);
  const minted = spawnSync(bin, ["token", "--sub", "pricing-test", "--scope", SCOPES, "--ttl", "86400"], {
    env,
    encoding: "utf8",
  });
  if (minted.status !== 0) {
    child.kill();
    throw new Error(`till token failed: ${minted.stderr}`);
  }
  const token = minted.stdout.trim();

  // Kept-alive connections, one per request in flight: fetch costs this client more CPU per
  // request than node:http, and the client shares the machine with the server.
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const request = (method: string, path: string, body?: unknown, bearer = token): Promise<Answer> =>
    new Promise((answer, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const headers: Record<string, string | number> = { authorization: `Bearer ${bearer}` };
      if (payload !== undefined) {
        headers["content-type"] = "application/json";
        headers["content-length"] = Buffer.byteLength(payload);
      }
      const sent = httpRequest(`${base}${path}`, { method, headers, agent }, (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          answer({ status: response.statusCode ?? 0, body: text.length > 0 ? JSON.parse(text) : null });
        });
        response.on("error", reject);
      });
      sent.on("error", reject);
      sent.end(payload);
    });
  const ok = async <T>(method: string, path: string, body?: unknown, bearer = token): Promise<T> => {
    const answer = await request(method, path, body, bearer);
    if (answer.status < 200 || answer.status > 299) {
      throw new Error(`${method} ${path} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
    }
    return answer.body as T;
  };
  const stop = async (): Promise<void> => {
    if (child.exitCode === null) {
      const exited = new Promise((done) => child.once("exit", done));
      child.kill("SIGTERM");
      await exited;
    }
    agent.destroy();
    await rm(dataDir, { recursive: true, force: true });
  };
  return { base, token, request, ok, stop };
}

/** Reads the server's log until it says where it listens. */
function listeningAddress(child: ChildProcess): Promise<string> {
  return new Promise((resolveAddress, reject) => {
    let log = "";
    let listening = false;
    const timer = setTimeout(() => fail(new Error(`till did not start within 60 s:\n${log}`)), 60_000);
    const fail = (error: Error): void => {
      clearTimeout(timer);
      child.kill();
      reject(error);
    };
    const read = (chunk: Buffer): void => {
      if (listening) {
        // Warnings and errors after the start go to the test's output.
        for (const line of chunk.toString().split("\n")) {
          if (/\b(WARN|ERROR)\b/.test(line)) {
            process.stderr.write(`till: ${line}\n`);
          }
        }
        return;
      }
      log += chunk.toString();
      const found = /till is serving addr=(\S+)/.exec(log);
      if (found) {
        listening = true;
        clearTimeout(timer);
        resolveAddress(`http://${found[1]}`);
      }
    };
    // Both streams are drained for the whole run, so that the server never blocks on a full pipe.
    child.stdout?.on("data", read);
    child.stderr?.on("data", read);
    child.once("exit", (code) => {
      if (!listening) {
        fail(new Error(`till exited (${code}) before listening:\n${log}`));
      }
    });
  });
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
  if (failed !== null) {
    throw failed;
  }
}
