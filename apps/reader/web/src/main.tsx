// The web UI of `lake-reader serve`: one page per URL, data from the JSON API.
import { render } from "preact";
import { interceptLinks, useRoute } from "./router.js";
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
        <span class="tz" title="Days and times are UTC, as the CLI counts them">UTC</span>
      </header>
      <main>{page}</main>
    </>
  );
}

interceptLinks();
render(<App />, document.getElementById("app")!);
