// chainrule's graph explorer: the behaviour of the page written by chainrule.viz.explore.
// Plain DOM code, no framework, nothing fetched. The page embeds one SVG per level (Graphviz's
// layout, in <template id="view-K">) and the graph's data as JSON (#graph-data). Text from the
// data only ever enters the page through textContent, never as markup.
(() => {
  "use strict";

  const data = JSON.parse(document.getElementById("graph-data").textContent);
  const $ = (id) => document.getElementById(id);
  const stage = $("stage");
  const details = $("details");
  const state = {
    view: 0, selected: null, step: -1, timer: null, matches: [], svg: null, mode: "backward",
  };
  const drawnItems = data.views.map((v) => new Set(v.items));

  // ---------------------------------------------------------------------------------------
  // Small helpers

  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (key === "onclick") node.addEventListener("click", value);
      else if (key === "className") node.className = value;
      else node.setAttribute(key, value);
    }
    for (const child of children) {
      if (child !== null && child !== undefined) {
        node.append(child instanceof Node ? child : String(child));
      }
    }
    return node;
  }

  const shapeText = (shape) => "(" + shape.join(", ") + ")";

  function bytesText(n) {
    if (n < 1024) return n + " B";
    if (n < 1024 * 1024) return (n / 1024).toFixed(1) + " KiB";
    return (n / 1024 / 1024).toFixed(1) + " MiB";
  }

  // "(1) float32  [5]": each number in a span that never wraps (lines break between numbers).
  function tensorText(t) {
    if (!t) return el("code", {}, "None");
    const code = el("code", {}, shapeText(t.shape) + " " + t.dtype + "  [");
    t.values.forEach((v, k) => {
      if (k) code.append(", ");
      code.append(el("span", { className: "num" }, String(v)));
    });
    code.append((t.more ? ", …" : "") + "]");
    return code;
  }

  const plural = (n, word) => n + " " + word + (n === 1 ? "" : "s");

  const nodeInfo = (id) => data.nodes[String(id)] || null;

  function nodeName(id) {
    const info = nodeInfo(id);
    if (info) return info.name;
    return data.names ? data.names[id] : "node";
  }

  const nodeLabel = (id) => nodeName(id) + " #" + id;

  // ---------------------------------------------------------------------------------------
  // Where a node is drawn

  // The key of the item standing for node `id` in view `v`: the node itself, the group that
  // holds it, "e" for a chain step not drawn, or null when the view does not contain it.
  function itemIn(v, id) {
    const view = data.views[v];
    const info = nodeInfo(id);
    const path = info ? info.path : [];
    let key;
    if (view.level < 0) {
      key = path.length ? "g" + path[0] : "n" + id;
    } else {
      const k = path.indexOf(view.level);
      if (k < 0) return null;
      key = k + 1 < path.length ? "g" + path[k + 1] : "n" + id;
    }
    if (drawnItems[v].has(key)) return key;
    return view.hidden ? "e" : null;
  }

  // The deepest drawn level holding node `id` (its own box there, or its group, or "…").
  function viewFor(id) {
    const info = nodeInfo(id);
    const path = info ? info.path : [];
    for (let k = path.length - 1; k >= 0; k--) {
      const v = data.groups[path[k]].view;
      if (v !== null && v !== undefined) return v;
    }
    return 0;
  }

  function groupItemIn(v, g) {
    // The item holding group g in view v (g itself or an enclosing group), or null.
    const view = data.views[v];
    for (let cur = g; cur >= 0; cur = data.groups[cur].parent) {
      if (drawnItems[v].has("g" + cur)) return "g" + cur;
      if (data.groups[cur].parent === view.level) break;
    }
    return null;
  }

  // ---------------------------------------------------------------------------------------
  // Views: show one level's SVG, pan and zoom it

  function showView(v) {
    if (!$("view-" + v)) return;
    state.view = v;
    setMode("backward");
    stage.replaceChildren($("view-" + v).content.cloneNode(true));
    const svg = stage.querySelector("svg");
    state.svg = svg;
    prepareSvg(svg);
    renderCrumbs();
    paint();
    if (state.selected && state.selected.kind === "group") renderGroup(state.selected.id);
  }

  function prepareSvg(svg) {
    svg.removeAttribute("width");
    svg.removeAttribute("height");
    svg.dataset.box = svg.getAttribute("viewBox");
    svg.setAttribute("preserveAspectRatio", "xMidYMid meet");
    for (const node of svg.querySelectorAll("g.node")) node.setAttribute("tabindex", "0");
  }

  // The second view: the forward graph (tensors as nodes, operations as edges).
  function setMode(mode) {
    state.mode = mode;
    $("show-backward").setAttribute("aria-pressed", String(mode === "backward"));
    $("show-forward").setAttribute("aria-pressed", String(mode === "forward"));
    document.body.dataset.mode = mode;
  }

  function showForward() {
    stopPlaying();
    setMode("forward");
    const template = $("forward-view");
    if (!template) {
      state.svg = null;
      stage.replaceChildren(el("p", { className: "note" },
        (data.forward && data.forward.note) || "No forward graph."));
      $("crumbs").replaceChildren("forward graph");
      return;
    }
    stage.replaceChildren(template.content.cloneNode(true));
    state.svg = stage.querySelector("svg");
    prepareSvg(state.svg);
    for (const text of state.svg.querySelectorAll("g.node text")) {
      if (text.textContent.startsWith("grad ")) text.dataset.final = text.textContent;
    }
    $("crumbs").replaceChildren("forward graph · values, local derivatives on the arrows; " +
                                "gradients appear as the backward pass reaches them");
    paint();
  }

  function showBackward() {
    if (state.mode === "backward") return;
    showView(state.view);
  }

  $("show-backward").addEventListener("click", showBackward);
  $("show-forward").addEventListener("click", showForward);

  function renderCrumbs() {
    const chain = [];
    for (let g = data.views[state.view].level; g >= 0; g = data.groups[g].parent) chain.unshift(g);
    const crumbs = [el("button", { onclick: () => showView(0) }, "graph")];
    for (const g of chain) {
      const v = data.groups[g].view;
      crumbs.push(" › ", el("button", { onclick: () => v !== null && showView(v) },
                            data.groups[g].label));
    }
    $("crumbs").replaceChildren(...crumbs);
  }

  function viewBox(svg) {
    return svg.getAttribute("viewBox").split(/[ ,]+/).map(Number);
  }

  function zoomAt(svg, factor, cx, cy) {
    const [x, y, w, h] = viewBox(svg);
    const nw = w * factor;
    const nh = h * factor;
    const nx = cx - (cx - x) * factor;
    const ny = cy - (cy - y) * factor;
    svg.setAttribute("viewBox", [nx, ny, nw, nh].join(" "));
  }

  function svgPoint(svg, clientX, clientY) {
    const point = svg.createSVGPoint();
    point.x = clientX;
    point.y = clientY;
    return point.matrixTransform(svg.getScreenCTM().inverse());
  }

  function centerOn(element) {
    const svg = state.svg;
    const rect = element.getBoundingClientRect();
    const c = svgPoint(svg, rect.x + rect.width / 2, rect.y + rect.height / 2);
    const [, , w, h] = viewBox(svg);
    svg.setAttribute("viewBox", [c.x - w / 2, c.y - h / 2, w, h].join(" "));
  }

  stage.addEventListener("wheel", (event) => {
    if (!state.svg) return;
    event.preventDefault();
    const p = svgPoint(state.svg, event.clientX, event.clientY);
    zoomAt(state.svg, event.deltaY > 0 ? 1.15 : 1 / 1.15, p.x, p.y);
  }, { passive: false });

  let drag = null;
  stage.addEventListener("mousedown", (event) => {
    if (state.svg) drag = { x: event.clientX, y: event.clientY, box: viewBox(state.svg), moved: false };
  });
  window.addEventListener("mousemove", (event) => {
    if (!drag) return;
    const dx = event.clientX - drag.x;
    const dy = event.clientY - drag.y;
    if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
    if (!drag.moved) return;
    const [x, y, w, h] = drag.box;
    const scale = w / state.svg.getBoundingClientRect().width;
    state.svg.setAttribute("viewBox", [x - dx * scale, y - dy * scale, w, h].join(" "));
  });
  window.addEventListener("mouseup", () => {
    setTimeout(() => { drag = null; }, 0);
  });

  $("fit").addEventListener("click", () => {
    if (state.svg) state.svg.setAttribute("viewBox", state.svg.dataset.box);
  });

  // ---------------------------------------------------------------------------------------
  // Painting: selection, search matches, and the player's progress

  // The step at which node `id` ran (undefined: it did not run in the recorded pass).
  const stepOf = (id) => { const info = nodeInfo(id); return info ? info.step : undefined; };
  const reached = (step) => step !== undefined && step <= state.step;

  function paintForward() {
    const svg = state.svg;
    const nodes = (data.forward && data.forward.nodes) || [];
    const current = state.step >= 0 ? data.steps[state.step].node : null;
    for (const d of nodes) {
      const box = svg.getElementById("d" + d.id);
      if (!box) continue;
      box.classList.remove("selected", "done", "active");
      const step = stepOf(d.node);
      if (reached(step)) box.classList.add(d.node === current ? "active" : "done");
      const sel = state.selected;
      if (sel && sel.kind === "data" && sel.id === d.id) box.classList.add("selected");
      for (const text of box.querySelectorAll("text[data-final]")) {
        text.textContent = reached(step) ? text.dataset.final : "grad ·";
      }
    }
  }

  function paint() {
    const svg = state.svg;
    if (!svg) return;
    if (state.mode === "forward") { paintForward(); return; }
    const v = state.view;
    for (const node of svg.querySelectorAll("g.node")) {
      node.classList.remove("selected", "match", "done", "partial", "active");
    }
    const mark = (key, cls) => {
      const node = key && svg.getElementById(key);
      if (node) node.classList.add(cls);
    };
    const sel = state.selected;
    if (sel && sel.kind === "node") mark(itemIn(v, sel.id), "selected");
    if (sel && sel.kind === "group") mark(groupItemIn(v, sel.id), "selected");
    for (const m of state.matches) {
      mark(m.kind === "node" ? itemIn(v, m.id) : groupItemIn(v, m.id), "match");
    }
    if (state.step >= 0) {
      for (const key of drawnItems[v]) {
        if (key[0] === "n") {
          const info = nodeInfo(Number(key.slice(1)));
          if (info && info.step !== undefined && info.step <= state.step) mark(key, "done");
        } else if (key[0] === "g") {
          const group = data.groups[Number(key.slice(1))];
          if (group.firstStep === undefined || group.firstStep > state.step) continue;
          mark(key, group.lastStep <= state.step ? "done" : "partial");
        }
      }
      // Dashed stubs: nodes of another level that this one connects to.
      for (const stub of svg.querySelectorAll("g.node.stub")) {
        if (reached(stepOf(Number(stub.id.slice(1))))) stub.classList.add("done");
      }
      mark(itemIn(v, data.steps[state.step].node), "active");
    }
  }

  // ---------------------------------------------------------------------------------------
  // Selection and the details panel

  function selectNode(id, navigate) {
    if (state.mode === "forward") showView(navigate ? viewFor(id) : state.view);
    if (navigate && itemIn(state.view, id) !== "n" + id && viewFor(id) !== state.view) {
      showView(viewFor(id));
    }
    state.selected = { kind: "node", id };
    paint();
    renderNode(id);
    if (navigate) {
      const box = state.svg.getElementById(itemIn(state.view, id));
      if (box) centerOn(box);
    }
  }

  function selectGroup(g) {
    state.selected = { kind: "group", id: g };
    paint();
    renderGroup(g);
  }

  function openGroup(g) {
    const v = data.groups[g].view;
    if (v !== null && v !== undefined) showView(v);
  }

  // The data nodes of the forward view and where the backward pass stands for them.
  function renderData(k) {
    const d = data.forward.nodes[k];
    const parts = [el("h2", {}, d.label, el("span", { className: "muted" },
                                             " " + shapeText(d.shape) + " " + d.dtype))];
    parts.push(el("p", { className: "muted" }, d.kind + " tensor"));
    parts.push(section("Value", d.value ? tensorText(d.value) : "not known"));
    const made = d.kind === "leaf" ? "accumulated by " : "made by ";
    parts.push(section("Backward node", el("p", {}, made, link(d.node),
                                           d.nr ? " (output " + d.nr + ")" : "")));
    const step = stepOf(d.node);
    let grad;
    if (step === undefined) grad = el("p", { className: "muted" }, "not reached by the pass");
    else if (!reached(step)) {
      grad = el("p", {}, "not yet: it arrives at engine step " + (step + 1) + " of " +
                data.steps.length);
    } else {
      grad = el("p", {}, "complete since engine step " + (step + 1) + ": ",
                tensorText(data.steps[step].in[d.nr]));
    }
    parts.push(section("Gradient of the output", grad));
    const incoming = (data.forward.edges || []).filter((e) => e.target === d.id);
    if (incoming.length) {
      const list = el("ul");
      for (const e of incoming) {
        const source = data.forward.nodes[e.source].label;
        const formula = e.formula ? " = " + e.formula : "";
        list.append(el("li", {}, "∂" + d.label + "/∂" + source + formula + " = ",
                       e.derivative ? tensorText(e.derivative) : "?"));
      }
      parts.push(section("Local derivatives", list));
    }
    const chain = chainRule(d);
    if (chain) parts.push(chain);
    details.replaceChildren(...parts);
  }

  // The chain rule written out for an input (viz.explain): its derivation, and its terms,
  // each lit once the backward pass has run every node that computes it.
  function chainRule(d) {
    const ex = data.forward.explain;
    if (!ex) return null;
    const mine = (ex.derivations || []).filter((x) => x.node === d.node && x.nr === d.nr);
    if (ex.note) return d.kind === "leaf" ? section("Chain rule", el("p", { className: "muted" },
                                                                       ex.note)) : null;
    if (!mine.length) return null;
    const parts = [];
    for (const x of mine) {
      const lines = [];
      for (const block of x.blocks) {
        const pad = " ".repeat(Math.max(0, block[0].indexOf(" = ")));
        lines.push(block[0], ...block.slice(1).map((line) => pad + " = " + line));
      }
      parts.push(el("pre", { className: "derivation" }, lines.join("\n")));
      const terms = el("ol", { className: "terms" });
      for (const t of x.terms) {
        const done = t.nodes.length > 0 && t.nodes.every((id) => reached(stepOf(id)));
        terms.append(el("li", { className: done ? "term done" : "term" }, t.text));
      }
      parts.push(el("p", { className: "muted" }, "Its terms, lit as the backward pass " +
                    "computes them:"), terms);
      if (x.locals.length) parts.push(el("p", {}, "with " + x.locals.join(", ")));
      parts.push(el("p", { className: "check" }, x.check));
    }
    return section("Chain rule", ...parts);
  }

  const link = (id) => el("button", { className: "link", onclick: () => selectNode(id, true) },
                          nodeLabel(id));

  function section(title, ...content) {
    return el("section", {}, el("h3", {}, title), ...content);
  }

  function renderNode(id) {
    const info = nodeInfo(id);
    if (!info) {
      details.replaceChildren(el("h2", {}, nodeLabel(id)),
                              el("p", {}, "Details were not embedded for this node (large graph)."));
      return;
    }
    const parts = [el("h2", {}, info.name, el("span", { className: "muted" }, " #" + id))];
    const facts = [];
    if (info.seq !== null) facts.push("sequence nr " + info.seq);
    const where = info.modules || info.path.filter((g) => data.groups[g].kind === "module")
      .map((g) => data.groups[g].label);
    if (where.length) facts.push("in " + where.join(" › "));
    if (facts.length) parts.push(el("p", { className: "muted" }, facts.join(" · ")));
    if (info.leaf) {
      const leaf = info.leaf;
      parts.push(section("Leaf tensor", el("p", {},
        (leaf.name || "(unnamed leaf)") + "  " + shapeText(leaf.shape) + " " + leaf.dtype +
        ", " + bytesText(leaf.bytes)), leafGrad(info)));
    }
    const inputs = el("ol", { start: "0" });
    for (const input of info.inputs) {
      const meta = input.shape ? "  " + shapeText(input.shape) + " " + input.dtype : "";
      inputs.append(el("li", {}, input.to === null ? "None" : link(input.to),
                       el("span", { className: "muted" }, meta)));
    }
    parts.push(section("Inputs (next_functions)", info.inputs.length ? inputs : "none"));
    const users = el("ul");
    for (const p of info.parents) users.append(el("li", {}, link(p)));
    for (const k of info.outputs || []) {
      const out = data.outputs[k];
      users.append(el("li", {}, "output " + out.label + "  " + shapeText(out.shape) + " " + out.dtype));
    }
    parts.push(section("Outputs (used by)", users));
    parts.push(section("Saved for backward", savedTable(info)));
    parts.push(section("Gradients", gradients(info)));
    details.replaceChildren(...parts);
  }

  function savedTable(info) {
    if (info.released) return el("p", {}, "Released after backward (retain_graph=False).");
    if (!info.saved.length) return el("p", { className: "muted" }, "nothing");
    const table = el("table", {}, el("tr", {}, ...["name", "shape", "dtype", "version", "bytes"]
      .map((h) => el("th", {}, h))));
    for (const row of info.saved) {
      if (row.kind === "tensor") {
        const changed = row.version_now !== undefined && row.version_now !== row.version;
        const version = row.version === null || row.version === undefined ? "—" :
          String(row.version) + (changed ? " (now " + row.version_now + "!)" : "");
        table.append(el("tr", {}, el("td", {}, row.name), el("td", {}, shapeText(row.shape)),
                        el("td", {}, row.dtype), el("td", {}, version),
                        el("td", {}, bytesText(row.bytes))));
      } else {
        table.append(el("tr", {}, el("td", {}, row.name),
                        el("td", { colspan: "4" }, row.repr)));
      }
    }
    return table;
  }

  // A leaf's .grad at the current step: set by its AccumulateGrad's step.
  function leafGrad(info) {
    if (info.step === undefined) {
      return el("p", {}, ".grad: " + (info.leaf.has_grad ? "set" : "None") +
                         " (not reached by a recorded backward pass)");
    }
    const row = data.steps[info.step];
    if (!reached(info.step)) {
      return el("p", {}, ".grad: no .grad yet (its AccumulateGrad runs at step " +
                         (info.step + 1) + ")");
    }
    const after = row.after && row.after.leaf;
    const when = row.afterNow ? " (after the pass)" : " (since step " + (info.step + 1) + ")";
    return el("p", {}, ".grad = ", tensorText(after || row.in[0]), when);
  }

  // What arrived at node `id` from the nodes that ran before the current step.
  function arrivals(id) {
    const list = el("ul");
    for (const p of nodeInfo(id).parents) {
      const parent = nodeInfo(p);
      if (!parent || !reached(parent.step)) continue;
      parent.inputs.forEach((input, k) => {
        const g = data.steps[parent.step].out[k];
        if (input.to !== id || !g) return;
        const slot = input.nr ? " into grad_output[" + input.nr + "]" : "";
        list.append(el("li", {}, "from ", link(p), " at step " + (parent.step + 1) + slot + ": ",
                       tensorText(g)));
      });
    }
    return list;
  }

  function gradients(info) {
    if (info.step === undefined) {
      return el("p", { className: "muted" },
                data.steps.length ? "This node did not run in the recorded backward pass."
                                  : "No backward pass recorded.");
    }
    const step = data.steps[info.step];
    const total = data.steps.length;
    if (!reached(info.step)) {
      const list = arrivals(info.id);
      const parts = [el("p", {}, "Runs at engine step " + (info.step + 1) + " of " + total +
                                 (state.step < 0 ? "." : "; now at step " + (state.step + 1) + "."))];
      if (list.children.length) parts.push(el("p", {}, "Arrived so far:"), list);
      else parts.push(el("p", { className: "muted" }, "No gradient has arrived yet."));
      return el("div", {}, ...parts);
    }
    const list = el("ul");
    step.in.forEach((g, k) => list.append(el("li", {}, "received grad_output[" + k + "]: ",
                                             tensorText(g))));
    step.out.forEach((g, k) => {
      const target = info.inputs[k] && info.inputs[k].to;
      if (target === null || target === undefined) return;
      list.append(el("li", {}, "sent to ", link(target), ": ", tensorText(g)));
    });
    for (const [nr, g] of Object.entries((step.after && step.after.retained) || {})) {
      list.append(el("li", {}, "retained .grad of output " + nr + ": ", tensorText(g)));
    }
    const now = info.step === state.step ? " (the current step)" : "";
    return el("div", {}, el("p", {}, "Ran at engine step " + (info.step + 1) + " of " + total +
                            now), list);
  }

  function renderGroup(g) {
    const group = data.groups[g];
    const parts = [el("h2", {}, group.label)];
    const kind = group.kind === "module" ? "module call" : "repeated steps (" + group.steps + ")";
    parts.push(el("p", { className: "muted" }, kind + " · " + plural(group.size, "node")));
    if (state.mode === "backward" && group.view === state.view) {
      parts.push(el("p", { className: "muted" }, "Open: its drawing is shown."));
    } else if (group.view !== null) {
      parts.push(el("button", { className: "open", onclick: () => openGroup(g) }, "Open ▸"));
    }
    const table = el("table", {}, el("tr", {}, el("th", {}, "node"), el("th", {}, "count")));
    for (const [name, count] of group.names) {
      table.append(el("tr", {}, el("td", {}, name), el("td", {}, String(count))));
    }
    parts.push(section("Nodes inside", table));
    if (group.firstStep !== undefined) {
      let now = "not reached yet";
      if (state.step >= group.lastStep) now = "done";
      else if (state.step >= group.firstStep) now = "running (now at step " + (state.step + 1) + ")";
      parts.push(section("Backward pass", el("p", {}, "engine steps " + (group.firstStep + 1) +
                                              "–" + (group.lastStep + 1) + ": " + now)));
    }
    details.replaceChildren(...parts);
  }

  function renderHelp() {
    const parts = [el("h2", {}, "Backward graph"),
      el("p", {}, plural(data.total, "node") + ". Arrows point the way data flowed forward; the " +
                  "backward pass walks them from the output (green) to the leaves (blue)."),
      el("p", {}, "Click a box for its details; double-click a group (double border) to open " +
                  "it; the path above the drawing goes back up. Scroll to zoom, drag to pan."),
      el("p", {}, data.steps.length ? "Play the backward pass with the buttons or ← →: " +
                  plural(data.steps.length, "engine step") + "; every panel shows the state " +
                  "at the current step." : "No backward pass recorded."),
      el("p", {}, "\u201cforward graph\u201d shows the graph as the articles draw it: " +
                  "tensors as nodes, operations as arrows, each gradient appearing as the " +
                  "backward pass reaches it.")];
    if (data.note) parts.push(el("p", { className: "note" }, data.note));
    details.replaceChildren(...parts);
  }

  stage.addEventListener("click", (event) => {
    if (drag && drag.moved) return;
    const box = event.target.closest("g.node");
    if (!box) return;
    const key = box.id;
    if (state.mode === "forward") {
      if (key.startsWith("d")) {
        state.selected = { kind: "data", id: Number(key.slice(1)) };
        paint();
        renderData(state.selected.id);
      }
      return;
    }
    const number = Number(key.replace(/^[a-z]+/, ""));
    if (key.startsWith("g")) selectGroup(number);
    else if (key.startsWith("n") || key.startsWith("v")) selectNode(number, false);
    else if (key.startsWith("x")) selectNode(number, true);
    else if (key.startsWith("out")) selectNode(data.outputs[number].node, false);
    else if (key === "e") {
      details.replaceChildren(el("h2", {}, "Steps not drawn"),
        el("p", {}, data.views[state.view].hidden + " repeated steps are not drawn here; " +
                    "the player and the search still reach them."));
    }
  });

  stage.addEventListener("dblclick", (event) => {
    if (state.mode === "forward") return;
    const box = event.target.closest("g.node");
    if (box && box.id.startsWith("g")) openGroup(Number(box.id.slice(1)));
  });

  stage.addEventListener("keydown", (event) => {
    const box = event.target.closest && event.target.closest("g.node");
    if (box && event.key === "Enter") box.dispatchEvent(new MouseEvent("click", { bubbles: true }));
  });

  // ---------------------------------------------------------------------------------------
  // The player: the backward pass in the order the engine ran it

  function setStep(k) {
    state.step = Math.max(-1, Math.min(k, data.steps.length - 1));
    const label = $("step-label");
    if (state.step < 0) {
      label.textContent = data.steps.length ? "before step 1 of " + data.steps.length : "no steps";
      paint();
      const sel = state.selected;
      if (sel && sel.kind === "node") renderNode(sel.id);
      if (sel && sel.kind === "data") renderData(sel.id);
      return;
    }
    const id = data.steps[state.step].node;
    label.textContent = "step " + (state.step + 1) + " / " + data.steps.length + ": " +
      nodeLabel(id);
    if (state.mode === "forward") {
      paint();
      const sel = state.selected;
      if (sel && sel.kind === "data") renderData(sel.id);
      else renderNode(id);
      return;
    }
    // Show the node's own box: open the (deepest drawn) group it is in, unless it is drawn here.
    if (itemIn(state.view, id) !== "n" + id && viewFor(id) !== state.view) showView(viewFor(id));
    state.selected = { kind: "node", id };
    paint();
    renderNode(id);
  }

  function stopPlaying() {
    if (state.timer !== null) clearInterval(state.timer);
    state.timer = null;
    $("play").textContent = "play";
  }

  function togglePlay() {
    if (state.timer !== null) { stopPlaying(); return; }
    if (state.step >= data.steps.length - 1) setStep(-1);
    $("play").textContent = "pause";
    state.timer = setInterval(() => {
      setStep(state.step + 1);
      if (state.step >= data.steps.length - 1) stopPlaying();
    }, 700);
  }

  $("first").addEventListener("click", () => { stopPlaying(); setStep(-1); });
  $("prev").addEventListener("click", () => { stopPlaying(); setStep(state.step - 1); });
  $("next").addEventListener("click", () => { stopPlaying(); setStep(state.step + 1); });
  $("last").addEventListener("click", () => { stopPlaying(); setStep(data.steps.length - 1); });
  $("play").addEventListener("click", togglePlay);

  // ---------------------------------------------------------------------------------------
  // Search

  function search(text) {
    const q = text.trim().toLowerCase();
    const results = $("results");
    state.matches = [];
    if (!q) {
      results.hidden = true;
      paint();
      return;
    }
    for (const info of Object.values(data.nodes)) {
      const leaf = info.leaf ? info.leaf.name.toLowerCase() : "";
      if (info.name.toLowerCase().includes(q) || (leaf && leaf.includes(q)) ||
          "#" + info.id === q) {
        state.matches.push({ kind: "node", id: info.id });
      }
    }
    for (const group of data.groups) {
      if (group.label.toLowerCase().includes(q)) state.matches.push({ kind: "group", id: group.id });
    }
    const items = state.matches.slice(0, 50).map((m) => {
      const text = m.kind === "node" ? nodeLabel(m.id) + leafSuffix(m.id) : data.groups[m.id].label;
      return el("li", {}, el("button", { onclick: () => goTo(m) }, text));
    });
    if (state.matches.length > 50) items.push(el("li", { className: "muted" },
                                                 "… " + (state.matches.length - 50) + " more"));
    if (!state.matches.length) items.push(el("li", { className: "muted" }, "no match"));
    results.replaceChildren(...items);
    results.hidden = false;
    paint();
  }

  function leafSuffix(id) {
    const info = nodeInfo(id);
    return info && info.leaf && info.leaf.name ? " (" + info.leaf.name + ")" : "";
  }

  function goTo(match) {
    $("results").hidden = true;
    if (state.mode === "forward") showView(state.view);
    if (match.kind === "node") {
      selectNode(match.id, true);
      return;
    }
    const parent = data.groups[match.id].parent;
    const v = parent < 0 ? 0 : data.groups[parent].view;
    if (v !== null && v !== state.view) showView(v);
    selectGroup(match.id);
  }

  const searchBox = $("search");
  searchBox.addEventListener("input", () => search(searchBox.value));
  searchBox.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && state.matches.length) goTo(state.matches[0]);
    if (event.key === "Escape") { searchBox.value = ""; search(""); }
  });

  document.addEventListener("keydown", (event) => {
    if (event.target === searchBox) return;
    if (event.target.tagName === "BUTTON" && (event.key === " " || event.key === "Enter")) return;
    if (event.key === "ArrowRight") { stopPlaying(); setStep(state.step + 1); }
    else if (event.key === "ArrowLeft") { stopPlaying(); setStep(state.step - 1); }
    else if (event.key === "Home") { stopPlaying(); setStep(-1); }
    else if (event.key === "End") { stopPlaying(); setStep(data.steps.length - 1); }
    else if (event.key === " ") { event.preventDefault(); togglePlay(); }
    else if (event.key === "/") { event.preventDefault(); searchBox.focus(); }
  });

  // ---------------------------------------------------------------------------------------

  showView(0);
  renderHelp();
  setStep(-1);
  document.body.dataset.ready = "true";
})();
