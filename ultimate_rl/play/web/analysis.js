// The analysis board: a line of moves of any registered game, stepped through move by move; for
// the position on the board the server's agent gives its move shares, value and expected line
// (POST /api/analysis). The drawing is app.js's (drawBoard, shadePolicy, drawPieces); the
// server checks every move, so a pasted line's mistakes come back named by their number.
"use strict";

const an = {
  game: null,       // the registered game's key
  moves: [],        // the line (action numbers)
  words: [],        // the line in the game's notation, as far as the server has written it
  ply: 0,           // how many of the line's moves are played on the board
  answers: new Map(),  // "game:moves" -> the server's answer (stepping back costs nothing)
  asking: false,    // a request is in flight (one at a time: the agent thinks for each)
  again: false,     // the position changed meanwhile: ask again when it answers
  busyTries: 0,     // 429s in a row for this position (the agent thinks for someone else)
};

const BUSY_RETRY_MS = 1000;
const BUSY_TRIES = 30;

function positionKey(ply = an.ply) {
  return `${an.game}:${an.moves.slice(0, ply).join(",")}`;
}

function remember(answer) {
  an.answers.set(`${answer.game}:${answer.moves.join(",")}`, answer);
  answer.moves_text.forEach((word, i) => { if (an.moves[i] === answer.moves[i]) an.words[i] = word; });
}

async function showPosition() {
  // draws the position on the board from the answers kept, else asks the server for it
  const answer = an.answers.get(positionKey());
  if (answer) { render(answer); return; }
  if (an.asking) { an.again = true; return; }
  an.asking = true;
  const key = positionKey();
  $("status").classList.remove("error");
  $("status").textContent = "The agent is thinking…";
  try {
    remember(await api("POST", "/api/analysis", { game: an.game, moves: an.moves.slice(0, an.ply) }));
    an.busyTries = 0;
  } catch (error) {
    if (error.status === 429 && an.busyTries < BUSY_TRIES) {
      an.busyTries += 1;
      $("status").textContent = `${error.message} (asking again in a second)`;
      setTimeout(() => { an.asking = false; showPosition(); }, BUSY_RETRY_MS);
      return;
    }
    an.busyTries = 0;
    showError(`Analysis failed: ${error.message}`);
  }
  an.asking = false;
  if (an.again || positionKey() !== key) { an.again = false; showPosition(); return; }
  const found = an.answers.get(key);
  if (found) render(found);
}

function render(answer) {
  const board = answer.board;
  const names = board.mark_names;
  const container = $("board");
  drawBoard(container, board, answer.over ? null : playAt);
  container.dataset.ply = String(answer.ply);
  container.classList.toggle("over", answer.over);
  shadePolicy(container, board, answer.policy);
  drawPieces(board, !answer.over);

  $("status").classList.remove("error");
  $("status").textContent = answer.over ? `Game over: ${answer.result_text}.`
    : `${names[answer.to_move]} to move.${board.hint ? ` ${board.hint}` : ""}`;
  $("level-info").textContent = `Analysed by ${answer.level.name}`
    + (answer.level.rating === null ? "" : ` (Elo ${answer.level.rating})`);
  $("ply-info").textContent = `Move ${answer.ply} of ${an.moves.length}`;
  drawValue(answer, names);
  $("pv").textContent = answer.pv_text.length ? answer.pv_text.join("  ") : "—";
  drawMoves();
  if (document.activeElement !== $("line")) $("line").value = an.words.slice(0, an.moves.length).join(" ");
  $("first").disabled = $("back").disabled = an.ply === 0;
  $("forward").disabled = $("last").disabled = an.ply >= an.moves.length;
  const query = new URLSearchParams({ kind: an.game, moves: an.words.slice(0, an.moves.length).join(" "), ply: an.ply });
  history.replaceState(null, "", `/analysis?${query}`);
}

function drawValue(answer, names) {
  // the value is the mover's; the bar shows the first player's share, as the board reads
  const hasValue = answer.value !== null;
  $("value").hidden = !hasValue;
  if (!hasValue) return;
  const first = answer.to_move === 0 ? answer.value : -answer.value;
  $("value-bar").style.width = `${Math.round(50 * (first + 1))}%`;
  const verdict = Math.abs(first) <= 0.2 ? "about even" : `${names[first > 0 ? 0 : 1]} is ahead`;
  const value = answer.value;
  $("value-text").textContent = `Value for ${names[answer.to_move]} (to move): `
    + `${value >= 0 ? "+" : ""}${value.toFixed(2)} (${verdict}).`;
}

function drawMoves() {
  const list = $("moves");
  list.replaceChildren();
  an.moves.forEach((action, i) => {
    const item = el("li", i + 1 === an.ply ? "current" : "", an.words[i] || `#${action}`);
    item.addEventListener("click", () => goTo(i + 1));
    list.appendChild(item);
  });
}

function playAt(cell) {
  // a move on the board: the line goes on from here (its old continuation kept if it agrees)
  const board = an.answers.get(positionKey()).board;
  const action = actionForCell(board, cell);
  if (action === undefined) return;
  for (const button of $("board").querySelectorAll(".cell.playable")) {
    button.classList.remove("playable");  // no second click on this position's board
    button.disabled = true;
  }
  if (an.moves[an.ply] !== action) {
    an.moves = [...an.moves.slice(0, an.ply), action];
    an.words = an.words.slice(0, an.ply);
  }
  goTo(an.ply + 1);
}

function goTo(ply) {
  an.ply = Math.max(0, Math.min(ply, an.moves.length));
  showPosition();
}

async function loadLine(body) {
  // a pasted move list or a finished game: the server reads it (and says what is wrong with it)
  $("status").classList.remove("error");
  $("status").textContent = "Reading the moves…";
  let answer;
  try {
    answer = await api("POST", "/api/analysis", body);
  } catch (error) {
    showError(error.message);
    return false;
  }
  an.game = answer.game;
  $("game").value = answer.game;
  an.moves = answer.moves;
  an.words = answer.moves_text.slice();
  an.ply = answer.moves.length;
  remember(answer);
  render(answer);
  return true;
}

function startPosition(game) {
  an.game = game;
  an.moves = [];
  an.words = [];
  goTo(0);
}

async function startAnalysis() {
  let info;
  try {
    info = await api("GET", "/api/info");
  } catch (error) {
    showError(`The server does not answer: ${error.message}`);
    return;
  }
  for (const name of info.analysis_games) {
    const option = el("option", "", name === info.game ? `${name} (this site's)` : name);
    option.value = name;
    $("game").appendChild(option);
  }
  $("game").addEventListener("change", () => startPosition($("game").value));
  $("load").addEventListener("click", () => {
    $("line").blur();
    loadLine({ game: an.game, moves: $("line").value });
  });
  $("line").addEventListener("keydown", (event) => { if (event.key === "Enter") $("load").click(); });
  $("reset").addEventListener("click", () => startPosition(an.game));
  $("first").addEventListener("click", () => goTo(0));
  $("back").addEventListener("click", () => goTo(an.ply - 1));
  $("forward").addEventListener("click", () => goTo(an.ply + 1));
  $("last").addEventListener("click", () => goTo(an.moves.length));
  document.addEventListener("keydown", (event) => {
    if (["INPUT", "SELECT", "TEXTAREA"].includes(event.target.tagName)) return;
    const to = { ArrowLeft: an.ply - 1, ArrowRight: an.ply + 1, Home: 0, End: an.moves.length }[event.key];
    if (to === undefined) return;
    event.preventDefault();
    goTo(to);
  });

  // /analysis?game=<id> opens a game's moves; ?kind=<game>&moves=<list>&ply=<n> a line
  const query = new URLSearchParams(location.search);
  const kind = query.get("kind") || info.game;
  $("game").value = an.game = info.analysis_games.includes(kind) ? kind : info.game;
  let loaded = false;
  if (query.get("game")) loaded = await loadLine({ from_game: query.get("game") });
  else if (query.get("moves")) loaded = await loadLine({ game: an.game, moves: query.get("moves") });
  if (!loaded) { if (!$("status").classList.contains("error")) startPosition(an.game); return; }
  const ply = Number(query.get("ply"));
  if (query.has("ply") && Number.isInteger(ply) && ply !== an.ply) goTo(ply);
}

startAnalysis();
