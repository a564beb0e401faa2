// `lake-collector service install` through the built bin: the systemd user unit and the launchd
// agent it writes name node, the bin and the root by absolute path; systemd-analyze accepts the
// unit; the agent's ProgramArguments (read back by a plist parser) start a real watch from an
// environment with nothing but a minimal PATH.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parse as parsePlist } from "plist";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { BIN, runCli } from "./helpers.js";

afterAll(cleanupTempDirs);

const NODE = realpathSync(process.execPath);
const REAL_BIN = realpathSync(BIN);

describe("service install", { timeout: 120_000 }, () => {
  it("writes a systemd user unit running watch by absolute paths; systemd-analyze verify accepts it; rerun changes nothing", async () => {
    const home = tempDir("svc-home");
    const root = join(tempDir("svc"), "my root %d");
    const projects = join(home, "work", "claude");
    mkdirSync(projects, { recursive: true });
    const env = { HOME: home, XDG_CONFIG_HOME: "" };
    const r = await runCli(["service", "install", "--platform", "linux", "--root", root, "--source", `claude-code=${projects}`, "--interval", "30"], env);
    expect(r.code, r.stderr).toBe(0);
    const file = join(home, ".config", "systemd", "user", "lake-collector.service");
    expect(r.stdout).toContain(`${file}: written`);
    expect(r.stdout).toContain("systemctl --user enable --now lake-collector.service");
    const text = readFileSync(file, "utf8");
    const exec = text.split("\n").filter((l) => l.startsWith("ExecStart="));
    expect(exec).toEqual([`ExecStart=${NODE} ${REAL_BIN} watch --root "${root.replace("%", "%%")}" --source claude-code=${projects} --interval 30`]);
    expect(text).toMatch(/^\[Install\]\nWantedBy=default\.target$/m);
    expect(text).toMatch(/^Restart=on-failure$/m);
    expect(statSync(file).mode & 0o777).toBe(0o644);
    const analyze = ["/usr/bin/systemd-analyze", "/bin/systemd-analyze"].find((p) => existsSync(p));
    if (analyze) {
      const v = spawnSync(analyze, ["verify", file], { encoding: "utf8" });
      expect(v.status, v.stderr).toBe(0);
    }
    const again = await runCli(["service", "install", "--platform", "linux", "--root", root, "--source", `claude-code=${projects}`, "--interval", "30", "--json"], env);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ file, written: false, unchanged: true });
    expect(readFileSync(file, "utf8")).toBe(text);
    // XDG_CONFIG_HOME moves the unit; --print shows it and writes nothing.
    const xdg = join(home, "xdg");
    const printed = await runCli(["service", "install", "--platform", "linux", "--root", root, "--print"], { HOME: home, XDG_CONFIG_HOME: xdg });
    expect(printed.code, printed.stderr).toBe(0);
    expect(printed.stdout).toMatch(/^\[Unit\]\n/);
    expect(printed.stdout).toContain(`ExecStart=${NODE} ${REAL_BIN} watch --root "${root.replace("%", "%%")}"\n`);
    expect(existsSync(join(xdg, "systemd"))).toBe(false);
  });

  it("writes a launchd agent whose ProgramArguments start a real watch from env -i PATH=/usr/bin:/bin", async () => {
    const home = tempDir("svc-mac");
    const root = join(home, "root");
    const r = await runCli(["service", "install", "--platform", "darwin", "--root", root, "--sources-only", "--json"], { HOME: home });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { file: string; written: boolean; start: string[] };
    const file = join(home, "Library", "LaunchAgents", "dev.lake.collector.plist");
    expect(out).toMatchObject({ file, written: true });
    expect(out.start).toEqual([`launchctl bootstrap gui/$(id -u) ${file}`]);
    const agent = parsePlist(readFileSync(file, "utf8")) as { Label: string; ProgramArguments: string[]; RunAtLoad: boolean; KeepAlive: { SuccessfulExit: boolean }; StandardErrorPath: string };
    expect(agent.Label).toBe("dev.lake.collector");
    expect(agent.ProgramArguments).toEqual([NODE, REAL_BIN, "watch", "--root", root, "--sources-only"]);
    expect(agent.RunAtLoad).toBe(true);
    expect(agent.KeepAlive).toEqual({ SuccessfulExit: false });
    expect(agent.StandardErrorPath).toBe(join(home, "Library", "Logs", "lake-collector.log"));

    // What launchd would start, with no shell setup at all: it runs, then SIGTERM stops it (exit 0).
    const [cmd, ...args] = agent.ProgramArguments as [string, ...string[]];
    const child = spawn("env", ["-i", "PATH=/usr/bin:/bin", `HOME=${home}`, cmd, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((res) => child.on("close", (code) => res(code)));
    const status = join(root, "watch.status");
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      if (existsSync(status) && (JSON.parse(readFileSync(status, "utf8")) as { state: string }).state === "running") break;
      await new Promise((res) => setTimeout(res, 100));
    }
    expect((JSON.parse(readFileSync(status, "utf8")) as { state: string }).state, stderr).toBe("running");
    child.kill("SIGTERM");
    expect(await exited, stderr).toBe(0);
  });

  it("refuses anything but \"service install\" and an unknown --platform (exit 2, one line)", async () => {
    for (const args of [["service"], ["service", "start"], ["service", "install", "--platform", "windows"]]) {
      const r = await runCli(args, { HOME: tempDir("svc-bad") });
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr.trimEnd().split("\n"), args.join(" ")).toHaveLength(1);
      expect(r.stderr).toMatch(/^lake-collector service( install)?: (needs a subcommand: install|unknown subcommand "start"; expected install|--platform "windows": expected one of linux, darwin)$/m);
    }
  });
});
