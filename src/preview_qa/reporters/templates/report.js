// report.html's filter: the statuses ticked and the words typed choose which tests the table and the cards show.
// It reads the rows' text (textContent) and sets `hidden`; it writes no markup, so no page text can run.
(() => {
  const box = document.getElementById("filters");
  const rows = [...document.querySelectorAll("#summary tbody tr")];
  const search = box.querySelector("input[type=search]");
  const apply = () => {
    const ticked = new Set([...box.querySelectorAll("input[type=checkbox]:checked")].map((input) => input.value));
    const words = search.value.trim().toLowerCase();
    let shown = 0;
    for (const row of rows) {
      const show = ticked.has(row.dataset.status) && row.textContent.toLowerCase().includes(words);
      row.hidden = !show;
      document.getElementById(row.dataset.test).hidden = !show;
      shown += show ? 1 : 0;
    }
    box.querySelector("output").textContent = `${shown} of ${rows.length} test(s) shown`;
  };
  box.hidden = false;
  box.addEventListener("input", apply);
  apply();
})();
