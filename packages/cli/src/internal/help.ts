import type { Option, OptionTable } from "./options.js";

/** The option part of a help: one row per listed option, help text aligned in a column. */
export function formatOptions(table: OptionTable): string {
  const rows = Object.entries(table)
    .filter(([, o]) => !o.hidden)
    .map(([name, o]) => [optionLabel(name, o), o.help] as const);
  const width = Math.min(24, Math.max(0, ...rows.map(([l]) => l.length)));
  return rows
    .map(([label, help]) => {
      const lines = help.split("\n");
      const pad = " ".repeat(2 + width + 2);
      const first = label.length > width ? `  ${label}\n${pad}${lines[0]}` : `  ${label.padEnd(width)}  ${lines[0]}`;
      return [first, ...lines.slice(1).map((l) => pad + l)].join("\n");
    })
    .join("\n");
}

function optionLabel(name: string, o: Option<unknown>): string {
  const short = o.short ? `-${o.short}, ` : "";
  return `${short}--${name}${o.kind === "value" ? ` ${o.arg ?? "VALUE"}` : ""}${o.multiple ? " …" : ""}`;
}
