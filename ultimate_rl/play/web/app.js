// The play page: draws the game the server keeps, sends the person's clicks as moves.
// The server validates every move and computes the agent's replies; this file only draws.
"use strict";

const TITLES = {
  uttt: "Ultimate Tic-Tac-Toe",
  numerical_ttt: "Numerical Tic-Tac-Toe",
  tictactoe: "Tic-Tac-Toe",
};
const BOARD_NAMES = ["top left", "top", "top right", "left", "centre", "right",
  "bottom left", "bottom", "bottom right"];

const ui = {
  info: null,      // /api/info
  game: null,      // the last game JSON from the server
  number: null,    // numerical_ttt: the number the person is about to write
  busy: false,     // a request is in flight
  analysis: null,  // the last analysis JSON, for the position it was made in
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
    throw new Error(data.error || `${response.status} ${response.statusText}`);
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
  return ui.info.game === "numerical_ttt" ? ["odd", "even"] : ["X", "O"];
}

function showError(message) {
  $("status").textContent = message;
  $("status").classList.add("error");
}

// ---- drawing ------------------------------------------------------------------------------

function cellButton(board, index, humanCanPlay) {
  const button = el("button", "cell");
  button.type = "button";
  button.dataset.cell = String(index);
  const mark = board.cells[index];
  if (mark) {
    button.textContent = mark;
    button.classList.add(board.owners[index] === 0 ? "p0" : "p1");
    button.setAttribute("aria-label", `cell ${index + 1}: ${mark}`);
  } else {
    button.setAttribute("aria-label", `cell ${index + 1}: empty`);
  }
  if (index === board.last_cell) button.classList.add("last");
  const playable = humanCanPlay && board.playable_cells[index];
  if (playable) {
    button.classList.add("playable");
    button.addEventListener("click", () => playCell(index));
  } else {
    button.disabled = true;
  }
  return button;
}

function drawUttt(container, board, humanCanPlay) {
  container.className = "board uttt";
  for (let b = 0; b < 9; b++) {
    const small = el("div", "small");
    small.dataset.board = String(b);
    const result = board.boards[b];
    if (humanCanPlay && board.active_boards.includes(b)) small.classList.add("active");
    if (result) small.classList.add(result === "draw" ? "drawn" : `won-${result.toLowerCase()}`);
    for (let c = 0; c < 9; c++) {
      const row = 3 * Math.floor(b / 3) + Math.floor(c / 3);
      const col = 3 * (b % 3) + (c % 3);
      small.appendChild(cellButton(board, row * 9 + col, humanCanPlay));
    }
    if (result && result !== "draw") small.appendChild(el("div", "big-mark", result));
    container.appendChild(small);
  }
}

function drawGrid(container, board, humanCanPlay) {
  container.className = `board grid side-${board.side}`;
  container.style.setProperty("--side", String(board.side));
  for (let i = 0; i < board.side * board.side; i++) {
    container.appendChild(cellButton(board, i, humanCanPlay));
  }
}

function drawNumbers(game) {
  const picker = $("numbers");
  picker.replaceChildren();
  const board = game.board;
  const show = board.game === "numerical_ttt" && game.human_to_move && !ui.busy;
  picker.hidden = !show;
  if (!show) return;
  if (!board.numbers_left.includes(ui.number)) ui.number = board.numbers_left[0];
  picker.appendChild(el("span", "muted", "Write:"));
  for (const n of board.numbers_left) {
    const button = el("button", n === ui.number ? "number selected" : "number", String(n));
    button.type = "button";
    button.dataset.number = String(n);
    button.addEventListener("click", () => { ui.number = n; drawNumbers(ui.game); });
    picker.appendChild(button);
  }
}

function statusText(game) {
  const board = game.board;
  const names = markNames();
  if (game.over) return game.result_text;
  if (ui.busy) return "The agent is thinking…";
  if (!game.human_to_move) return "Waiting for the agent…";
  let text = `Your move (${names[game.human]}).`;
  if (board.game === "uttt") {
    text += board.active_boards.length === 1
      ? ` Play in the ${BOARD_NAMES[board.active_boards[0]]} board (highlighted).`
      : " Play in any open board (highlighted).";
  } else if (board.game === "numerical_ttt") {
    text += " Pick a number, then a cell; a line summing to 15 wins.";
  }
  return text;
}

function draw() {
  const game = ui.game;
  const board = game.board;
  const humanCanPlay = !game.over && game.human_to_move && !ui.busy;
  const container = $("board");
  container.replaceChildren();
  if (board.game === "uttt") drawUttt(container, board, humanCanPlay);
  else drawGrid(container, board, humanCanPlay);
  container.classList.toggle("over", game.over);
  drawNumbers(game);

  $("status").classList.remove("error");
  $("status").textContent = statusText(game);
  $("resign").disabled = game.over || ui.busy;

  const result = $("result");
  result.hidden = !game.over;
  result.className = `result ${game.result || ""}`;
  result.textContent = game.over ? game.result_text : "";

  const link = $("game-link");
  link.replaceChildren(el("span", "", "Link to this game: "));
  const anchor = el("a", "", `${location.origin}/game/${game.id}`);
  anchor.href = `/game/${game.id}`;
  link.appendChild(anchor);
  drawAnalysis();
}

// ---- analysis overlay ---------------------------------------------------------------------

function drawAnalysis() {
  const panel = $("analysis");
  const game = ui.game;
  const wanted = $("analysis-toggle").checked && !game.over;
  const fresh = ui.analysis && ui.analysis.id === game.id && ui.analysis.moves === game.actions.length;
  panel.hidden = !(wanted && fresh);
  if (!panel.hidden) overlayPolicy(ui.analysis);
}

function overlayPolicy(analysis) {
  const board = ui.game.board;
  const perCell = new Array(board.side * board.side).fill(0);
  analysis.policy.forEach((p, action) => { perCell[board.action_cells[action]] += p; });
  const top = Math.max(...perCell, 1e-9);
  for (const button of $("board").querySelectorAll(".cell")) {
    const p = perCell[Number(button.dataset.cell)];
    if (p <= 0.001) continue;
    button.style.setProperty("--heat", (p / top).toFixed(3));
    button.classList.add("heat");
    button.appendChild(el("span", "pct", `${Math.round(100 * p)}%`));
  }
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
  if (!$("analysis-toggle").checked || !game || game.over || !game.human_to_move) {
    drawAnalysis();
    return;
  }
  try {
    ui.analysis = await api("GET", `/api/games/${game.id}/analysis`);
  } catch (error) {
    showError(`Analysis failed: ${error.message}`);
    return;
  }
  draw();
}

// ---- actions ------------------------------------------------------------------------------

function actionForCell(cell) {
  const board = ui.game.board;
  if (board.game === "numerical_ttt") return 9 * cell + (ui.number - 1);
  return board.action_cells.indexOf(cell);
}

async function send(method, path, body) {
  ui.busy = true;
  draw();
  try {
    ui.game = await api(method, path, body);
  } catch (error) {
    ui.busy = false;
    draw();
    showError(error.message);
    return;
  }
  ui.busy = false;
  if (ui.game.over) flipSide();
  draw();
  refreshAnalysis();
}

function playCell(cell) {
  if (ui.busy) return;
  send("POST", `/api/games/${ui.game.id}/move`, { action: actionForCell(cell) });
}

function chosenSide() {
  return document.querySelector("input[name=side]:checked").value;
}

function flipSide() {
  // the next game starts with the other player, so the first move alternates between games
  const other = ui.game.human === 0 ? "o" : "x";
  document.querySelector(`input[name=side][value=${other}]`).checked = true;
}

async function newGame(replace) {
  ui.busy = true;
  $("status").textContent = "Starting a new game…";
  try {
    ui.game = await api("POST", "/api/games", { side: chosenSide() });
  } catch (error) {
    ui.busy = false;
    showError(error.message);
    return;
  }
  ui.busy = false;
  ui.analysis = null;
  // from "/" the new game's link replaces the address, so Back does not start yet another game
  const url = `/game/${ui.game.id}`;
  if (replace === true) history.replaceState({ id: ui.game.id }, "", url);
  else history.pushState({ id: ui.game.id }, "", url);
  draw();
  refreshAnalysis();
}

async function loadGame(id) {
  try {
    ui.game = await api("GET", `/api/games/${id}`);
  } catch (error) {
    showError(`${error.message}`);
    $("board").replaceChildren();
    return;
  }
  const side = ui.game.human === 0 ? "x" : "o";
  document.querySelector(`input[name=side][value=${side}]`).checked = true;
  draw();
  refreshAnalysis();
}

async function start() {
  try {
    ui.info = await api("GET", "/api/info");
  } catch (error) {
    showError(`The server does not answer: ${error.message}`);
    return;
  }
  const title = TITLES[ui.info.game] || ui.info.game;
  document.title = `${title} vs ${ui.info.agent}`;
  $("title").textContent = title;
  $("subtitle").textContent = `against ${ui.info.agent}`;
  const names = markNames();
  $("side-x").textContent = `${names[0]} (first)`;
  $("side-o").textContent = `${names[1]} (second)`;
  $("analysis-toggle-label").hidden = !ui.info.can_analyse;

  $("new-game").addEventListener("click", newGame);
  $("resign").addEventListener("click", () => {
    if (ui.game && !ui.game.over && !ui.busy) send("POST", `/api/games/${ui.game.id}/resign`);
  });
  $("analysis-toggle").addEventListener("change", refreshAnalysis);
  window.addEventListener("popstate", () => route());
  route();
}

function route() {
  const match = location.pathname.match(/^\/game\/([A-Za-z0-9_-]+)$/);
  if (match) loadGame(match[1]);
  else newGame(true);
}

start();
