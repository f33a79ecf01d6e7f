// Keyboard navigation of the review page (grade review --serve): j/k move among the items of a list (mistakes,
// students, the submissions of a mistake), o or Enter opens the item's (first) link, x selects it
// (every student of a card); n/p (or the arrow keys)
// go to the next/previous submission, u back to the list, c to the comment; Ctrl+Enter saves the form typed in.
(() => {
  const items = [...document.querySelectorAll("[data-item]")];
  let at = -1;
  items.forEach((item, i) => {
    item.tabIndex = 0;
    item.addEventListener("focus", () => { at = i; });
  });
  const move = (i) => {
    if (!items.length) return;
    at = Math.max(0, Math.min(items.length - 1, i));
    items[at].focus();
    items[at].scrollIntoView({ block: "nearest" });
  };
  const follow = (selector) => {
    const link = document.querySelector(selector);
    if (link) location.href = link.href;
  };
  const open = () => items[at]?.querySelector("a[href]")?.click();
  const actions = {
    j: () => move(at + 1), k: () => move(at - 1), o: open, Enter: open,
    x: () => {  // a card of several students: all of them
      const boxes = [...(items[at]?.querySelectorAll("input[type=checkbox]") ?? [])];
      const checked = !boxes.every((box) => box.checked);
      boxes.forEach((box) => { box.checked = checked; });
    },
    n: () => follow("a[rel=next]"), ArrowRight: () => follow("a[rel=next]"),
    p: () => follow("a[rel=prev]"), ArrowLeft: () => follow("a[rel=prev]"),
    u: () => follow("a[rel=up]"), c: () => document.querySelector("textarea[name=comment]")?.focus(),
  };
  document.addEventListener("keydown", (event) => {
    const target = event.target;
    if (target.closest("input, textarea, select")) {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && target.form) {
        event.preventDefault();
        target.form.requestSubmit();
      } else if (event.key === "Escape") {
        target.blur();
      }
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "Enter" && !target.hasAttribute("data-item")) return;  // a link or a button does its own
    const action = actions[event.key];
    if (action) {
      event.preventDefault();
      action();
    }
  });
})();
