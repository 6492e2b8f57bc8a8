// The chat page's script: a file served from 'self', as the production
// CSP (default-src 'self') allows no inline script.
"use strict";
const ROOM = "chat:lobby";
const $ = (id) => document.getElementById(id);
const people = new Map();

function line(text, cls, from) {
  const li = document.createElement("li");
  if (cls) li.className = cls;
  if (from) {
    const b = document.createElement("span");
    b.className = "from";
    b.textContent = from + ": ";
    li.append(b);
  }
  li.append(document.createTextNode(text));
  $("log").append(li);
}

function showPeople() {
  const ul = $("people");
  ul.replaceChildren();
  for (const name of [...people.values()].sort()) {
    const li = document.createElement("li");
    li.textContent = name;
    ul.append(li);
  }
}

function connect(name) {
  const q = name ? "?name=" + encodeURIComponent(name) : "";
  const scheme = location.protocol === "https:" ? "wss://" : "ws://";
  const ws = new WebSocket(scheme + location.host + "/chat/socket" + q);
  ws.onopen = () => ws.send(JSON.stringify({ op: "join", topic: ROOM }));
  ws.onmessage = (e) => {
    const m = JSON.parse(e.data);
    if (m.op === "joined") {
      for (const p of m.presence) people.set(p.id, p.name);
      showPeople();
      $("status").textContent = "In the lobby.";
      $("join").hidden = true;
      $("room").hidden = false;
      $("say").elements.text.focus();
    } else if (m.op === "error") {
      $("status").textContent = m.error;
    } else if (m.event === "presence.join") {
      people.set(m.data.id, m.data.name);
      showPeople();
      line(m.data.name + " joined", "note");
    } else if (m.event === "presence.leave") {
      people.delete(m.data.id);
      showPeople();
      line(m.data.name + " left", "note");
    } else if (m.event === "message") {
      line(String(m.data.text), "", m.from ? m.from.name : "?");
    }
  };
  ws.onclose = () => {
    $("status").textContent = "Disconnected. Reload to join again.";
  };
  $("say").onsubmit = (e) => {
    e.preventDefault();
    const input = $("say").elements.text;
    ws.send(JSON.stringify({ op: "publish", topic: ROOM, event: "message", data: { text: input.value } }));
    input.value = "";
  };
}

// Logged in? Chat under that name; otherwise ask for a guest name.
fetch("/auth/session", { credentials: "same-origin" }).then((r) => {
  if (r.ok) {
    connect(null);
  } else {
    const name = new URLSearchParams(location.search).get("name");
    if (name) {
      connect(name);
    } else {
      $("status").textContent = "Pick a guest name to join.";
      $("join").hidden = false;
      $("join").onsubmit = (e) => {
        e.preventDefault();
        connect($("join").elements.name.value);
      };
    }
  }
});
