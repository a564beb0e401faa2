// Controls more than one page uses; each writes what it sets into the URL (setQuery).
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
