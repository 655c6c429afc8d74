// ngc-builder catalog: the index's search box and filters. Plain JS, no library, works
// from file:// (nothing is fetched). A row shows when it contains every word typed and
// matches every filter chosen.
(function () {
  "use strict";
  var search = document.getElementById("search");
  var table = document.getElementById("images");
  if (!search || !table) {
    return;
  }
  var rows = Array.prototype.slice.call(table.tBodies[0].rows);
  var selects = Array.prototype.slice.call(document.querySelectorAll("select[data-filter]"));
  var count = document.getElementById("count");
  var none = document.getElementById("none");

  function matches(row, words) {
    var text = row.getAttribute("data-search");
    for (var i = 0; i < words.length; i++) {
      if (text.indexOf(words[i]) < 0) {
        return false;
      }
    }
    for (var j = 0; j < selects.length; j++) {
      var wanted = selects[j].value;
      var key = selects[j].getAttribute("data-filter");
      if (wanted && row.getAttribute("data-" + key).split(" ").indexOf(wanted) < 0) {
        return false;
      }
    }
    return true;
  }

  function update() {
    var words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
    var shown = 0;
    rows.forEach(function (row) {
      var show = matches(row, words);
      row.hidden = !show;
      shown += show ? 1 : 0;
    });
    count.textContent = shown + " of " + rows.length + " images";
    none.hidden = shown > 0;
  }

  search.addEventListener("input", update);
  selects.forEach(function (select) { select.addEventListener("change", update); });
  document.getElementById("filters").addEventListener("submit", function (event) {
    event.preventDefault();
  });
  update();
}());
