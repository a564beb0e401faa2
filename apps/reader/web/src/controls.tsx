// What more than one page uses: the page's frame, and controls that each write what they set into
// the URL (setQuery).
import type { ComponentChildren } from "preact";
import { shortId } from "./format.js";
import { setQuery } from "./router.js";

/** The From and To day inputs: `since` and `until` in the URL, as the CLI's --since and --until. */
export function DateRange(props: { since: string; until: string }) {
  return (
    <>
      <label class="field">
        From <input type="date" name="since" value={props.since} onChange={(e) => setQuery({ since: (e.target as HTMLInputElement).value })} />
      </label>
      <label class="field">
        To <input type="date" name="until" value={props.until} onChange={(e) => setQuery({ until: (e.target as HTMLInputElement).value })} />
      </label>
    </>
  );
}

/** A session's short id, linking to its transcript page (the whole id on hover). */
export function SessionLink(props: { id: string }) {
  return (
    <a class="mono" href={`/session/${encodeURIComponent(props.id)}`} title={props.id}>
      {shortId(props.id)}
    </a>
  );
}

/**
 * A page: `<div class="page {name}">` with its heading and what stands beside the title (`head`),
 * what sits under the heading (`tools`: filters, a form), the API call's error as one line (or
 * nothing), then the body.
 */
export function Page(props: { name: string; title: string; head?: ComponentChildren; tools?: ComponentChildren; error: string | undefined; children?: ComponentChildren }) {
  return (
    <div class={`page ${props.name}`}>
      <div class="page-head">
        <h1>{props.title}</h1>
        {props.head}
      </div>
      {props.tools}
      {props.error ? <div class="error">{props.error}</div> : null}
      {props.children}
    </div>
  );
}

/** A column of a {@link Grid}: its heading, or `{ num }` for a right-aligned (numeric) one. */
export type Column = string | { readonly num: string };

/**
 * A table in the `grid` style: `<table class="grid" data-testid={testid}>` with its heading row from
 * `columns`; the children are its `<tbody>` (and a `<tfoot>`, if any).
 */
export function Grid(props: { testid: string; columns: readonly Column[]; children?: ComponentChildren }) {
  return (
    <table class="grid" data-testid={props.testid}>
      <thead>
        <tr>{props.columns.map((c) => (typeof c === "string" ? <th>{c}</th> : <th class="num">{c.num}</th>))}</tr>
      </thead>
      {props.children}
    </table>
  );
}

/** A segmented control. */
export function Toggle<T extends string>(props: { label: string; value: T; options: readonly (readonly [T, string])[]; onChange: (v: T) => void }) {
  return (
    <span class="toggle" role="group" aria-label={props.label}>
      <span class="toggle-label">{props.label}</span>
      {props.options.map(([v, text]) => (
        <button type="button" class={v === props.value ? "on" : ""} aria-pressed={v === props.value} onClick={() => props.onChange(v)}>
          {text}
        </button>
      ))}
    </span>
  );
}
