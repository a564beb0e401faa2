// The web UI of `lake-reader serve`: one page per URL, data from the JSON API.
import { render } from "preact";
import { pageZone, serverZone } from "./format.js";
import { interceptLinks, setQuery, useRoute } from "./router.js";
import { Overview } from "./pages/overview.js";
import { Sessions } from "./pages/sessions.js";
import { Session } from "./pages/session.js";
import { Search } from "./pages/search.js";
import { Fleet } from "./pages/fleet.js";
import "uplot/dist/uPlot.min.css";
import "./style.css";

const NAV = [
  ["/", "Overview"],
  ["/sessions", "Sessions"],
  ["/search", "Search"],
  ["/fleet", "Fleet"],
] as const;

/** The zones the control offers: the server's first, then UTC, the browser's and every zone Intl knows. */
function zones(): string[] {
  const all = typeof Intl.supportedValuesOf === "function" ? Intl.supportedValuesOf("timeZone") : [];
  return [...new Set([serverZone(), "UTC", Intl.DateTimeFormat().resolvedOptions().timeZone, ...all])];
}

/** The page's zone (?tz=, else the server's): days are counted and times shown in it. */
function ZoneControl(props: { query: URLSearchParams }) {
  const zone = pageZone(props.query.toString());
  const server = serverZone();
  return (
    <label class="tz" title="Days are counted and times shown in this zone (usage --timezone)">
      <span class="tz-label">Timezone</span>
      <select name="tz" value={zone} onChange={(e) => setQuery({ tz: (e.target as HTMLSelectElement).value === server ? undefined : (e.target as HTMLSelectElement).value })}>
        {zones().map((z) => (
          <option value={z}>{z === server ? `${z} (server)` : z}</option>
        ))}
      </select>
    </label>
  );
}

function App() {
  const route = useRoute();
  const p = route.path;
  const session = /^\/session\/([^/]+)$/.exec(p);
  const page =
    p === "/" ? <Overview query={route.query} />
    : p === "/sessions" ? <Sessions query={route.query} />
    : session ? <Session id={decodeURIComponent(session[1]!)} query={route.query} />
    : p === "/search" ? <Search query={route.query} />
    : p === "/fleet" ? <Fleet />
    : <div class="empty">No page at {p}. <a href="/">Overview</a></div>;
  const active = session ? "/sessions" : p;
  return (
    <>
      <header class="top">
        <a class="brand" href="/">
          <span class="logo" aria-hidden="true">◆</span> lake
        </a>
        <nav>
          {NAV.map(([href, label]) => (
            <a href={href} class={active === href ? "on" : ""}>
              {label}
            </a>
          ))}
        </nav>
        <ZoneControl query={route.query} />
      </header>
      <main>{page}</main>
    </>
  );
}

interceptLinks();
render(<App />, document.getElementById("app")!);
