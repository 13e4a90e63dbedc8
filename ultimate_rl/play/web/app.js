// The play page: draws the game the server keeps, sends the person's clicks as moves.
// The server validates every move, runs the clock and computes the agent's replies; this file
// only draws. Every answer is checked against the game on screen (ui.game.id), so a reply to an
// older game can never replace the one the address bar shows, and a WebSocket keeps the page in
// step with the other player, other windows and the agent.
"use strict";

// The board JSON is the game's own description (rows x cols cells, optional blocks, what each
// cell holds, which actions a click on a cell plays), so nothing here names a game.
const STORE = "ultimate_rl.";

const ui = {
  info: null,       // /api/info
  game: null,       // the last game JSON from the server, for the game on screen
  token: null,      // this game's play token (null: watching)
  piece: null,      // what the person is about to write, where a cell offers a choice (numbers)
  sending: false,   // a move or resign of this page is in flight
  pending: null,    // the cell of the person's move, drawn before the server answers
  invite: null,     // {id, url}: the invitation of the game this page created for a friend
  ratings: {},      // player name -> Elo, for the seats of rated games (null: being asked)
  analysis: null,   // the last analysis JSON, for the position it was made in
  pendingPly: 0,    // the move count when the pending move was sent
  receivedAt: 0,    // when ui.game arrived (Date.now()), for the countdown between answers
  watchGeneration: 0,  // bumped whenever another game is shown: older sockets are ignored
  socket: null,     // the WebSocket of the game on screen
};

const $ = (id) => document.getElementById(id);

async function api(method, path, body) {
  const options = { method, headers: {} };
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  const response = await fetch(path, options);
  const data = await response.json().catch(() => ({ error: response.statusText }));
  if (!response.ok) {
    const error = new Error(data.error || `${response.status} ${response.statusText}`);
    error.status = response.status;
    throw error;
  }
  return data;
}

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function markNames() {
  return ui.info.mark_names;
}

function showError(message) {
  $("status").textContent = message;
  $("status").classList.add("error");
}

function mySeat(game) {
  // the seat this page plays (the server names it when the page sends its token), else none
  if (!ui.token) return null;
  return game.seat === null || game.seat === undefined ? game.human : game.seat;
}

function waitingForFriend(game) {
  return game.seats.some((seat) => seat.kind === "open");
}

function canPlay() {
  const game = ui.game;
  return Boolean(ui.token) && !game.over && game.to_move === mySeat(game)
    && !waitingForFriend(game) && !ui.sending && ui.pending === null;
}

function seatName(game, seat) {
  const held = game.seats[seat];
  if (held.kind === "level") return game.level.name;
  return held.player || (seat === mySeat(game) ? "you" : "your friend");
}

// ---- drawing ------------------------------------------------------------------------------

// ``onClick(cell)``: what a click on a playable cell does (null: the board is not clickable);
// the analysis board (analysis.js) draws with these too
function cellButton(board, index, onClick) {
  const button = el("button", "cell");
  button.type = "button";
  button.dataset.cell = String(index);
  let mark = board.cells[index];
  if (!mark && index === ui.pending) {
    const seat = mySeat(ui.game);
    mark = board.pieces_left.length ? ui.piece : markNames()[seat];
    button.classList.add("pending", seat === 0 ? "p0" : "p1");
  }
  if (mark) {
    button.textContent = mark;
    if (board.owners[index] >= 0) button.classList.add(board.owners[index] === 0 ? "p0" : "p1");
    button.setAttribute("aria-label", `cell ${index + 1}: ${mark}`);
  } else {
    button.setAttribute("aria-label", `cell ${index + 1}: empty`);
  }
  if (index === board.last_cell) button.classList.add("last");
  if (board.winning_cells.includes(index)) button.classList.add("win");
  const playable = onClick && board.playable_cells[index];
  if (playable) {
    button.classList.add("playable");
    button.addEventListener("click", () => onClick(index));
  } else {
    button.disabled = true;
  }
  return button;
}

function drawBlocks(container, board, onClick) {
  // a grid cut into block x block sub-boards (uttt's small boards), each boxed and tinted
  const perRow = board.cols / board.block;
  container.className = "board blocks";
  container.style.setProperty("--cols", String(perRow));
  for (let b = 0; b < board.blocks.length; b++) {
    const small = el("div", "small");
    small.dataset.board = String(b);
    small.style.setProperty("--cols", String(board.block));
    const result = board.blocks[b];
    const winner = board.mark_names.indexOf(result);
    if (onClick && board.active_blocks.includes(b)) small.classList.add("active");
    if (result) small.classList.add(winner < 0 ? "drawn" : `won-p${winner}`);
    for (let c = 0; c < board.block * board.block; c++) {
      const row = board.block * Math.floor(b / perRow) + Math.floor(c / board.block);
      const col = board.block * (b % perRow) + (c % board.block);
      small.appendChild(cellButton(board, row * board.cols + col, onClick));
    }
    if (winner >= 0) small.appendChild(el("div", "big-mark", result));
    container.appendChild(small);
  }
}

function drawGrid(container, board, onClick) {
  container.className = `board grid side-${Math.max(board.rows, board.cols)}`;
  container.style.setProperty("--cols", String(board.cols));
  for (let i = 0; i < board.rows * board.cols; i++) {
    container.appendChild(cellButton(board, i, onClick));
  }
}

function drawBoard(container, board, onClick) {
  container.replaceChildren();
  if (board.block) drawBlocks(container, board, onClick);
  else drawGrid(container, board, onClick);
}

function drawPieces(board, canWrite) {
  // the numbers the mover may write (numerical tic-tac-toe), where a cell offers a choice
  const picker = $("numbers");
  picker.replaceChildren();
  const show = board.pieces_left.length > 0 && canWrite;
  picker.hidden = !show;
  if (!show) return;
  if (!board.pieces_left.includes(ui.piece)) ui.piece = board.pieces_left[0];
  picker.appendChild(el("span", "muted", "Write:"));
  for (const piece of board.pieces_left) {
    const button = el("button", piece === ui.piece ? "number selected" : "number", piece);
    button.type = "button";
    button.dataset.number = piece;
    button.addEventListener("click", () => { ui.piece = piece; drawPieces(board, canWrite); });
    picker.appendChild(button);
  }
}

function statusText(game) {
  const board = game.board;
  const names = markNames();
  if (game.over) return game.result_text;
  if (waitingForFriend(game)) {
    return ui.token ? "Waiting for your friend to open the invitation link…"
      : "Waiting for the second player to join.";
  }
  const mover = seatName(game, game.to_move);
  const seat = mySeat(game);
  if (game.opponent === "person") {
    const away = game.seats[game.to_move].computer ? " (away: the computer plays for them)" : "";
    if (seat === null) return `Watching (read-only): ${mover} (${names[game.to_move]}) is to move${away}.`;
    if (ui.pending !== null || game.to_move !== seat) return `${mover}'s move (${names[game.to_move]})${away}…`;
  } else {
    if (seat === null) return `Watching (read-only): ${game.human_to_move ? "the person" : "the agent"} is to move.`;
    if (ui.pending !== null || game.thinking || !game.human_to_move) return "The agent is thinking…";
  }
  return board.hint ? `Your move (${names[seat]}). ${board.hint}` : `Your move (${names[seat]}).`;
}

async function fetchRating(name) {
  // a rated game shows both players' Elo; asked once per name and page
  ui.ratings[name] = null;
  try {
    const player = await api("GET", `/api/players/${encodeURIComponent(name)}`);
    ui.ratings[name] = Math.round(player.rating);
  } catch (error) {
    ui.ratings[name] = error.status === 404 ? 1000 : null;  // a new player starts at 1000
  }
  if (ui.game) drawSeats(ui.game);
}

function drawSeats(game) {
  // both players, their marks, ratings of rated games and whether they are here
  const names = markNames();
  const parts = game.seats.map((held, seat) => {
    let who = held.kind === "open" ? "(invited)" : seatName(game, seat);
    if (game.rated && held.player) {
      const rating = ui.ratings[held.player];
      if (rating === undefined) fetchRating(held.player);
      else if (rating !== null) who += ` (Elo ${rating})`;
    }
    const here = held.kind !== "person" ? "" : held.present ? " ●" : " ○ away";
    const playing = held.kind === "person" && held.computer ? " (computer playing)" : "";
    return `${names[seat]}: ${who}${here}${playing}`;
  });
  const watching = game.watchers ? ` · ${game.watchers} watching` : "";
  $("seats").textContent = (game.opponent === "person" ? parts.join(" · ") : "") + watching;
  const invite = ui.invite && ui.invite.id === game.id && waitingForFriend(game);
  $("invite").hidden = !invite;
  if (invite) {
    const url = `${location.origin}${ui.invite.url}`;
    $("invite-link").textContent = url;
    $("invite-link").href = url;
  }
  const again = game.over && game.opponent === "person" && ui.token
    && game.seats.every((held) => held.kind === "person");
  $("rematch").hidden = !again;
  $("rematch").textContent = game.rematch ? "Go to the rematch" : "Rematch (sides swap)";
}

function draw() {
  const game = ui.game;
  const board = game.board;
  const container = $("board");
  drawBoard(container, board, canPlay() ? playCell : null);
  container.classList.toggle("over", game.over);
  drawPieces(board, canPlay());

  $("status").classList.remove("error");
  $("status").textContent = statusText(game);
  $("resign").hidden = !ui.token;
  $("resign").disabled = game.over || ui.sending;
  const level = game.level.rating === null ? game.level.name
    : `${game.level.name} (Elo ${game.level.rating})`;
  const against = game.opponent === "person" ? `A game between two people${game.rated ? ", rated" : ""}`
    : `Against ${level}${game.rated ? `, rated for ${game.player}` : ""}`;
  $("game-info").textContent = against + (game.turn_seconds ? `, ${game.turn_seconds} s a move` : "");
  $("analysis-toggle-label").hidden = game.rated || game.over || game.opponent === "person";
  drawSeats(game);

  const result = $("result");
  result.hidden = !game.over;
  result.className = `result ${game.result ? game.result.outcome : ""}`;
  result.textContent = game.over ? game.result_text : "";
  const changes = game.rating_changes || [];
  $("rating-change").hidden = !changes.length;
  $("rating-change").textContent = changes.map((change) =>
    `${change.player}'s rating: ${Math.round(change.before)} → ${Math.round(change.after)}`).join("; ");
  drawLinks(game);
  drawClock();
  drawAnalysis();
}

function drawLinks(game) {
  const watch = `${location.origin}/game/${game.id}`;
  const link = (id, label, url) => {
    const anchor = el("a", "", url);
    anchor.href = url;
    $(id).replaceChildren(el("span", "", label), anchor);
  };
  if (ui.token) link("play-link", "Play link (secret: whoever has it can move): ", `${watch}#play=${ui.token}`);
  else $("play-link").replaceChildren();
  link("watch-link", "Watch link (read-only): ", watch);
}

function drawClock() {
  const game = ui.game;
  const clock = $("clock-left");
  const left = game.seconds_left;
  clock.hidden = left === null || left === undefined || game.over;
  if (clock.hidden) return;
  const remaining = Math.max(0, left - (Date.now() - ui.receivedAt) / 1000);
  clock.textContent = `${Math.ceil(remaining)} s left`;
  clock.classList.toggle("low", remaining < 10);
}

// ---- analysis overlay ---------------------------------------------------------------------

function drawAnalysis() {
  const panel = $("analysis");
  const game = ui.game;
  const wanted = $("analysis-toggle").checked && !game.over && !game.rated
    && game.opponent !== "person";
  const fresh = ui.analysis && ui.analysis.id === game.id && ui.analysis.moves === game.actions.length;
  panel.hidden = !(wanted && fresh);
  if (!panel.hidden) overlayPolicy(ui.analysis);
}

function shadePolicy(container, board, policy) {
  // each cell tinted by the agent's share of the moves on it, the share written in its corner
  const perCell = board.cell_actions.map(
    (actions) => actions.reduce((sum, action) => sum + (policy[action] || 0), 0));
  const top = Math.max(...perCell, 1e-9);
  for (const button of container.querySelectorAll(".cell")) {
    const p = perCell[Number(button.dataset.cell)];
    if (p <= 0.001) continue;
    button.style.setProperty("--heat", (p / top).toFixed(3));
    button.classList.add("heat");
    button.appendChild(el("span", "pct", `${Math.round(100 * p)}%`));
  }
}

function overlayPolicy(analysis) {
  shadePolicy($("board"), ui.game.board, analysis.policy);
  const value = analysis.value;
  const bar = $("value-bar");
  const hasValue = value !== null && value !== undefined;
  $("value").hidden = !hasValue;  // agents without a value estimate show the policy only
  if (!hasValue) return;
  // value is for the player to move; show it from the person's side
  const forHuman = analysis.to_move === ui.game.human ? value : -value;
  bar.style.width = `${Math.round(50 * (forHuman + 1))}%`;
  const verdict = forHuman > 0.2 ? "you are ahead" : forHuman < -0.2 ? "the agent is ahead"
    : "about even";
  $("value-text").textContent = `Value for you: ${forHuman >= 0 ? "+" : ""}${forHuman.toFixed(2)} (${verdict}).`;
}

async function refreshAnalysis() {
  const game = ui.game;
  if (!$("analysis-toggle").checked || !game || game.over || game.rated || !game.human_to_move
      || game.opponent === "person") {
    drawAnalysis();
    return;
  }
  try {
    const analysis = await api("GET", `/api/games/${game.id}/analysis`);
    if (analysis.id !== ui.game.id) return;
    ui.analysis = analysis;
  } catch (error) {
    showError(`Analysis failed: ${error.message}`);
    return;
  }
  draw();
}

// ---- after the game: review and leaderboard -----------------------------------------------

async function showReview() {
  const id = ui.game.id;
  let review;
  try {
    // the values from this page's seat (a friend's game has two); a watcher sees X's
    const seat = ui.token ? `?token=${encodeURIComponent(ui.token)}` : "";
    review = await api("GET", `/api/games/${id}/review${seat}`);
  } catch (error) {
    return;  // e.g. the game was replaced meanwhile
  }
  if (!ui.game || ui.game.id !== id) return;
  $("review-side").textContent = ui.token ? "you" : review.side_name;
  $("analyse-link").href = `/analysis?game=${encodeURIComponent(id)}`;
  const svg = $("review-chart");
  const ns = "http://www.w3.org/2000/svg";
  const values = review.plies.map((p) => p.value_for_you);
  const x = (i) => 10 + (380 * i) / Math.max(1, values.length - 1);
  const y = (v) => 60 - 50 * v;
  const axis = document.createElementNS(ns, "line");
  Object.entries({ x1: 10, x2: 390, y1: 60, y2: 60, class: "axis" })
    .forEach(([k, v]) => axis.setAttribute(k, v));
  const line = document.createElementNS(ns, "polyline");
  line.setAttribute("class", "line");
  line.setAttribute("points", values.map((v, i) => (v === null ? null : `${x(i)},${y(v)}`))
    .filter(Boolean).join(" "));
  svg.replaceChildren(axis, line);
  const list = $("review-moves");
  list.replaceChildren();
  const short = (text) => text.split(" (")[0];  // "e5 (board 5, cell 5)" -> "e5"
  for (const ply of review.plies) {
    // the person's moves show the agent's preference where it differs (in red)
    const differs = ply.by === "you" && ply.best !== null && ply.best !== ply.move;
    const who = { agent: "Agent", opponent: "Opponent", computer: "Computer (for them)" };
    const text = ply.by === "you"
      ? `You: ${short(ply.move_text)}${differs ? ` (agent: ${short(ply.best_text)})` : " ✓"}`
      : `${who[ply.by] || ply.by}: ${short(ply.move_text)}`;
    list.appendChild(el("li", differs ? "differs" : "", text));
  }
  $("review").hidden = false;
}

async function showLeaderboard() {
  let board;
  try {
    board = await api("GET", "/api/leaderboard");
  } catch (error) {
    return;
  }
  const rows = board.players.map((p, i) => {
    const row = el("tr");
    for (const text of [i + 1, p.name, Math.round(p.rating), p.games, `${p.wins} / ${p.draws} / ${p.losses}`]) {
      row.appendChild(el("td", "", String(text)));
    }
    return row;
  });
  if (!rows.length) {
    const empty = el("tr");
    const cell = el("td", "muted", "No rated games yet: tick \"Rated\", pick a rated level and play.");
    cell.colSpan = 5;
    empty.appendChild(cell);
    rows.push(empty);
  }
  $("leaderboard-rows").replaceChildren(...rows);
}

async function showPlayerRating() {
  const name = $("player").value.trim();
  localStorage.setItem(`${STORE}player`, name);
  if (!name) { $("player-rating").textContent = ""; return; }
  try {
    const player = await api("GET", `/api/players/${encodeURIComponent(name)}`);
    $("player-rating").textContent = `Elo ${Math.round(player.rating)}`;
  } catch (error) {
    $("player-rating").textContent = error.status === 404 ? "new player: starts at 1000" : "";
  }
}

// ---- the game on screen -------------------------------------------------------------------

function show(game) {
  // answers about another game than the one on screen are dropped (bug: a late agent reply);
  // returns whether it drew
  if (!ui.game || game.id !== ui.game.id) return false;
  if (game.version < ui.game.version) return false;
  // the same game again (a move's answer, then its push): nothing to redraw
  if (JSON.stringify(game) === JSON.stringify(ui.game) && ui.pending === null) return false;
  const wasOver = ui.game.over;
  ui.game = game;
  ui.receivedAt = Date.now();
  if (ui.pending !== null && (game.actions.length > ui.pendingPly || game.over)) ui.pending = null;
  draw();
  if (game.over && !wasOver) finished();
  else refreshAnalysis();
  return true;
}

function finished() {
  if (ui.token && ui.game.opponent !== "person") flipSide();
  showReview();
  showLeaderboard();
  showPlayerRating();
  localStorage.removeItem(`${STORE}last`);
}

function display(game, token) {
  ui.watchGeneration += 1;
  if (ui.socket) ui.socket.close();  // the old game's
  ui.game = game;
  ui.receivedAt = Date.now();
  ui.token = token;
  ui.pending = null;
  ui.sending = false;
  ui.analysis = null;
  $("review").hidden = true;
  draw();
  if (game.over) finished();
  else refreshAnalysis();
  watch(ui.watchGeneration);
}

function watch(generation) {
  // one WebSocket per page: the server sends the game at every change (a move, the clock, who
  // is here, the computer taking over); a page that holds a seat sends its token, so the
  // server counts its person as here while it is open. A dropped socket reconnects.
  const game = ui.game;
  const seat = ui.token ? `?token=${encodeURIComponent(ui.token)}` : "";
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const socket = new WebSocket(`${scheme}://${location.host}/api/games/${game.id}/ws${seat}`);
  ui.socket = socket;
  socket.addEventListener("message", (event) => {
    if (generation !== ui.watchGeneration) return;
    const message = JSON.parse(event.data);
    if (message.type === "game") show(message.game);
    else if (message.type === "error") showError(message.error);
  });
  socket.addEventListener("close", () => {
    if (generation !== ui.watchGeneration) return;
    // 0.5-1.5 s, at random: after a restart the pages do not all come back in the same instant
    const delay = 500 + 1000 * Math.random();
    setTimeout(() => { if (generation === ui.watchGeneration) watch(generation); }, delay);
  });
}

// ---- actions ------------------------------------------------------------------------------

function actionForCell(board, cell) {
  const actions = board.cell_actions[cell];
  if (!board.pieces_left.length) return actions[0];
  return actions.find((action) => board.action_pieces[action] === ui.piece);
}

async function send(path, body) {
  const id = ui.game.id;
  ui.sending = true;
  draw();
  try {
    const game = await api("POST", path, { token: ui.token, ...body });
    if (ui.game.id !== id) return;
    ui.sending = false;
    if (!show(game)) draw();  // pushes came first: the board only needs to be playable again
  } catch (error) {
    if (ui.game.id !== id) return;
    ui.sending = false;
    ui.pending = null;
    // the game may have changed elsewhere (another window, the clock): redraw it as it is now
    try { show(await api("GET", `/api/games/${id}`)); } catch (ignored) { /* keep the old view */ }
    showError(error.message);
  }
}

function playCell(cell) {
  if (!canPlay()) return;
  ui.pending = cell;
  ui.pendingPly = ui.game.actions.length;
  send(`/api/games/${ui.game.id}/move`,
    { action: actionForCell(ui.game.board, cell), ply: ui.game.actions.length, wait: false });
}

function chosenSide() {
  return document.querySelector("input[name=side]:checked").value;
}

function flipSide() {
  // the next game starts with the other player, so the first move alternates between games
  const other = ui.game.human === 0 ? "o" : "x";
  document.querySelector(`input[name=side][value=${other}]`).checked = true;
}

function inProgress() {
  return ui.game && ui.token && !ui.game.over;
}

async function newGame(replace, opponent = "level") {
  if (replace !== true && inProgress()
      && !window.confirm("Start a new game? The game in progress stays open at its link.")) return;
  const rated = $("rated").checked;
  const body = {
    side: chosenSide(),
    level: opponent === "level" ? $("level").value : undefined,
    opponent,
    turn_seconds: Number($("clock").value),
    rated,
    wait: false,
  };
  if (rated || $("player").value.trim()) body.player = $("player").value.trim();
  $("status").textContent = "Starting a new game…";
  let game;
  try {
    game = await api("POST", "/api/games", body);
  } catch (error) {
    showError(error.message);
    return;
  }
  localStorage.setItem(`${STORE}token.${game.id}`, game.token);
  localStorage.setItem(`${STORE}last`, game.id);
  if (game.invite_url) ui.invite = { id: game.id, url: game.invite_url };
  // from "/" the new game's link replaces the address, so Back does not start yet another game
  const url = `/game/${game.id}`;
  if (replace === true) history.replaceState({ id: game.id }, "", url);
  else history.pushState({ id: game.id }, "", url);
  display(game, game.token);
}

async function joinGame(id, invite) {
  // the invitation takes the second seat once; this device keeps the seat's token
  history.replaceState({ id }, "", `/game/${id}`);  // the code leaves the address bar
  const name = $("player").value.trim();
  try {
    const joined = await api("POST", `/api/games/${id}/join`,
      name ? { invite, player: name } : { invite });
    localStorage.setItem(`${STORE}token.${id}`, joined.token);
    localStorage.setItem(`${STORE}last`, id);
  } catch (error) {
    showError(error.status === 400 && !name
      ? `${error.message} Type your name above, then open the invitation link again.`
      : `Could not join: ${error.message}`);
  }
}

async function rematch() {
  const game = ui.game;
  if (game.rematch) { localStorage.setItem(`${STORE}token.${game.rematch}`, ui.token); go(game.rematch); return; }
  try {
    const next = await api("POST", `/api/games/${game.id}/rematch`, { token: ui.token });
    localStorage.setItem(`${STORE}token.${next.id}`, next.token);
    go(next.id);
  } catch (error) {
    showError(error.message);
  }
}

function go(id) {
  localStorage.setItem(`${STORE}last`, id);
  history.pushState({ id }, "", `/game/${id}`);
  loadGame(id);
}

async function loadGame(id, orNew) {
  const fromLink = location.hash.match(/^#play=([A-Za-z0-9_-]+)$/);
  if (fromLink) {
    localStorage.setItem(`${STORE}token.${id}`, fromLink[1]);
    history.replaceState({ id }, "", `/game/${id}`);  // the secret leaves the address bar
  }
  const invited = location.hash.match(/^#invite=([A-Za-z0-9_-]+)$/);
  if (invited) await joinGame(id, invited[1]);
  let game;
  const token = localStorage.getItem(`${STORE}token.${id}`);
  try {
    game = await api("GET", `/api/games/${id}${token ? `?token=${encodeURIComponent(token)}` : ""}`);
  } catch (error) {
    if (orNew) { localStorage.removeItem(`${STORE}last`); newGame(true); return; }
    showError(error.message);
    $("board").replaceChildren();
    return;
  }
  if (token && !game.over && game.opponent !== "person") {
    document.querySelector(`input[name=side][value=${game.human === 0 ? "x" : "o"}]`).checked = true;
  }
  display(game, token);
}

async function start() {
  try {
    ui.info = await api("GET", "/api/info");
  } catch (error) {
    showError(`The server does not answer: ${error.message}`);
    return;
  }
  const title = ui.info.title;
  document.title = `${title} — play`;
  $("title").textContent = title;
  $("rules").textContent = ui.info.rules;
  const names = markNames();
  $("side-x").textContent = `${names[0]} (first)`;
  $("side-o").textContent = `${names[1]} (second)`;
  for (const level of ui.info.levels) {
    const option = el("option", "", level.rating === null ? `${level.name} (unrated)`
      : `${level.name} (Elo ${level.rating})`);
    option.value = level.name;
    option.selected = level.name === ui.info.default_level;
    $("level").appendChild(option);
  }
  $("player").value = localStorage.getItem(`${STORE}player`) || "";
  $("player").addEventListener("change", showPlayerRating);

  $("new-game").addEventListener("click", newGame);
  $("play-friend").addEventListener("click", () => newGame(false, "person"));
  $("copy-invite").addEventListener("click", () => {
    navigator.clipboard.writeText($("invite-link").href).then(
      () => { $("copy-invite").textContent = "Copied"; },
      () => { showError("Copy failed: select the link and copy it by hand."); });
  });
  $("start-level").addEventListener("click", () => {
    send(`/api/games/${ui.game.id}/join`, { level: $("level").value });
  });
  $("rematch").addEventListener("click", rematch);
  $("resign").addEventListener("click", () => {
    if (inProgress() && !ui.sending && window.confirm("Resign this game?")) {
      send(`/api/games/${ui.game.id}/resign`, {});
    }
  });
  $("analysis-toggle").addEventListener("change", refreshAnalysis);
  window.addEventListener("popstate", () => route());
  setInterval(() => { if (ui.game) drawClock(); }, 250);
  showLeaderboard();
  showPlayerRating();
  route();
}

function route() {
  const match = location.pathname.match(/^\/game\/([A-Za-z0-9_-]+)$/);
  if (match) { loadGame(match[1]); return; }
  if (location.pathname === "/leaderboard") $("leaderboard").scrollIntoView();
  // "/" resumes this device's unfinished game, if any, else starts one
  const last = localStorage.getItem(`${STORE}last`);
  if (last) {
    history.replaceState({ id: last }, "", `/game/${last}`);
    loadGame(last, true);
  } else {
    newGame(true);
  }
}

if (document.body.dataset.page !== "analysis") start();  // analysis.js starts the analysis board
