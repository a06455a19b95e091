/* cronplane console: tabs, dialogs, the job picker, cron presets, payload loading.
 * Plain JavaScript, no build step; htmx (htmx.min.js) does the server round trips.
 * Nothing here decides what is allowed: the server checks every request. */
(function () {
  "use strict";

  function $(selector, root) { return (root || document).querySelector(selector); }
  function $all(selector, root) { return Array.prototype.slice.call((root || document).querySelectorAll(selector)); }
  function fire(element, name) { element.dispatchEvent(new Event(name, { bubbles: true })); }

  /* -- tabs (WAI-ARIA tabs pattern: arrows, Home, End) ------------------ */
  function selectTab(tab, focus) {
    var list = tab.closest("[role=tablist]");
    $all("[role=tab]", list).forEach(function (other) {
      var selected = other === tab;
      other.setAttribute("aria-selected", selected ? "true" : "false");
      other.tabIndex = selected ? 0 : -1;
      var panel = document.getElementById(other.getAttribute("aria-controls"));
      if (panel) { panel.hidden = !selected; }
    });
    if (focus) { tab.focus(); }
  }
  function setupTabs() {
    $all("[role=tablist]").forEach(function (list) {
      var tabs = $all("[role=tab]", list);
      tabs.forEach(function (tab, index) {
        tab.addEventListener("click", function () { selectTab(tab, false); });
        tab.addEventListener("keydown", function (event) {
          var next = null;
          if (event.key === "ArrowRight") { next = tabs[(index + 1) % tabs.length]; }
          if (event.key === "ArrowLeft") { next = tabs[(index - 1 + tabs.length) % tabs.length]; }
          if (event.key === "Home") { next = tabs[0]; }
          if (event.key === "End") { next = tabs[tabs.length - 1]; }
          if (next) { event.preventDefault(); selectTab(next, true); }
        });
      });
    });
    // A field with an error: show its tab.
    var invalid = $("[aria-invalid=true]");
    var panel = invalid && invalid.closest("[role=tabpanel]");
    if (panel && panel.hidden) { selectTab(document.getElementById(panel.getAttribute("aria-labelledby")), false); }
  }

  /* -- dialogs ----------------------------------------------------------- */
  function setupDialogs() {
    document.addEventListener("click", function (event) {
      var opener = event.target.closest("[data-open-dialog]");
      if (opener && !opener.disabled) {
        var dialog = document.getElementById(opener.getAttribute("data-open-dialog"));
        if (dialog && !dialog.open) { dialog.showModal(); }
        return;
      }
      var closer = event.target.closest("[data-close-dialog]");
      if (closer) { var open = closer.closest("dialog"); if (open) { open.close(); } }
      // A button that changes something asks first (its data-confirm is the question).
      var asking = event.target.closest("button[data-confirm]");
      if (asking && !window.confirm(asking.getAttribute("data-confirm"))) { event.preventDefault(); }
    });
    $all("input[data-open-dialog]").forEach(function (input) {
      input.addEventListener("keydown", function (event) {
        if (event.key === "Enter" || event.key === " ") { event.preventDefault(); input.click(); }
      });
    });
  }

  /* -- job picker -------------------------------------------------------- */
  function setupPicker() {
    var picker = $("#job-picker");
    if (!picker) { return; }
    var filter = $("#job-filter", picker);
    filter.addEventListener("input", function () {
      var needle = filter.value.trim().toLowerCase();
      $all("tbody tr[data-search]", picker).forEach(function (row) {
        row.hidden = needle !== "" && row.getAttribute("data-search").indexOf(needle) < 0;
      });
    });
    picker.addEventListener("click", function (event) {
      var button = event.target.closest("[data-pick-job]");
      if (!button) { return; }
      var job = $("#job"), name = $("#name"), payload = $("#payload");
      var previous = job.value;
      job.value = button.getAttribute("data-pick-job");
      $("#stack").value = button.getAttribute("data-stack");
      $("#job-title").textContent = button.getAttribute("data-title");
      if (name && !name.readOnly && (name.value === "" || name.value === previous)) { name.value = job.value; }
      if (payload && !payload.readOnly) {
        var fresh = JSON.stringify(JSON.parse(button.getAttribute("data-payload")), null, 2);
        var untouched = payload.value.trim() === "" || payload.value.trim() === "{}" ||
          payload.value === payload.getAttribute("data-filled");
        payload.setAttribute("data-default", button.getAttribute("data-payload"));
        if (untouched) { payload.value = fresh; payload.setAttribute("data-filled", fresh); }
      }
      updateSeed();
      picker.close();
      fire(job, "input");
      document.body.dispatchEvent(new Event("job-picked"));
      var chooser = $("#pick-job"); if (chooser) { chooser.focus(); }
    });
  }

  function updateSeed() {
    var seed = $("#seed");
    if (!seed || $("#editor").getAttribute("data-creating") !== "true") { return; }
    var name = $("#name").value || $("#job").value || "new";
    seed.value = [seed.getAttribute("data-tenant"), $("#stack").value || "default",
      $("#environment").value || "default", name].join("/");
  }

  /* -- cron presets ------------------------------------------------------ */
  var PATTERNS = [
    ["seconds", /^(?:@every (\d+)s|every (\d+) seconds?)$/],
    ["minutes", /^\*\/(\d+) \* \* \* \*$/],
    ["hourly", /^(\d+) \* \* \* \*$/],
    ["daily", /^(\d+) (\d+) \* \* \*$/],
    ["weekly", /^(\d+) (\d+) \* \* ([0-7])$/],
    ["monthly", /^(\d+) (\d+) (\d+) \* \*$/],
    ["yearly", /^(\d+) (\d+) (\d+) (\d+) \*$/],
    ["once", /^(?:@once|once at) (\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2})$/i]
  ];
  function pad(n) { return (n < 10 ? "0" : "") + n; }
  function timeParts() {
    var parts = ($("#p-time").value || "00:00").split(":");
    return [parseInt(parts[1], 10) || 0, parseInt(parts[0], 10) || 0];
  }
  function compose(preset) {
    var t = timeParts(), m = t[0], h = t[1];
    switch (preset) {
      case "seconds": return "every " + $("#p-seconds").value + ($("#p-seconds").value === "1" ? " second" : " seconds");
      case "minutes": return "*/" + $("#p-every").value + " * * * *";
      case "hourly": return (parseInt($("#p-minute").value, 10) || 0) + " * * * *";
      case "daily": return m + " " + h + " * * *";
      case "weekly": return m + " " + h + " * * " + $("#p-weekday").value;
      case "monthly": return m + " " + h + " " + ($("#p-day").value || 1) + " * *";
      case "yearly": return m + " " + h + " " + ($("#p-day").value || 1) + " " + $("#p-month").value + " *";
      case "once": return $("#p-once").value.trim() ? "once at " + $("#p-once").value.trim().replace(" ", "T").slice(0, 16) : null;
      default: return null;
    }
  }
  function showParams(preset) {
    $all("[data-preset-param]").forEach(function (field) {
      field.hidden = field.getAttribute("data-preset-param").split(" ").indexOf(preset) < 0;
    });
  }
  function detect(expression) {
    var text = expression.trim().replace(/\s+/g, " ");
    for (var i = 0; i < PATTERNS.length; i++) {
      var match = PATTERNS[i][1].exec(text);
      if (!match) { continue; }
      var preset = PATTERNS[i][0];
      if (preset === "seconds") {
        var count = String(+(match[1] || match[2]));
        var choice = $all("#p-seconds option").filter(function (o) { return o.textContent === count; })[0];
        if (!choice) { return "advanced"; }
        $("#p-seconds").value = choice.textContent;
      } else if (preset === "minutes") {
        var option = $("#p-every option[value='" + match[1] + "']") ||
          $all("#p-every option").filter(function (o) { return o.textContent === match[1]; })[0];
        if (!option) { return "advanced"; }
        $("#p-every").value = option.value || option.textContent;
      } else if (preset === "hourly") {
        $("#p-minute").value = match[1];
      } else if (preset === "once") {
        $("#p-once").value = match[1] + " " + match[2];
      } else {
        if (+match[1] > 59 || +match[2] > 23) { return "advanced"; }
        $("#p-time").value = pad(+match[2]) + ":" + pad(+match[1]);
        if (preset === "weekly") { $("#p-weekday").value = String(+match[3] % 7); }
        if (preset === "monthly" || preset === "yearly") { $("#p-day").value = match[3]; }
        if (preset === "yearly") { $("#p-month").value = match[4]; }
      }
      return preset;
    }
    return "advanced";
  }
  function setupPresets() {
    var preset = $("#preset"), cron = $("#cron");
    if (!preset || !cron) { return; }
    preset.value = detect(cron.value);
    showParams(preset.value);
    function write() {
      showParams(preset.value);
      var expression = compose(preset.value);
      if (expression !== null && !cron.readOnly) { cron.value = expression; fire(cron, "input"); }
      if (preset.value === "advanced") { cron.focus(); }
    }
    preset.addEventListener("change", write);
    $all("[data-preset-param] input, [data-preset-param] select").forEach(function (control) {
      control.addEventListener("input", write);
      control.addEventListener("change", write);
    });
    cron.addEventListener("input", function (event) {
      if (event.isTrusted) { preset.value = detect(cron.value); showParams(preset.value); }
    });
  }

  /* -- payload ----------------------------------------------------------- */
  function setupPayload() {
    var payload = $("#payload");
    if (!payload) { return; }
    var file = $("#payload-file");
    if (file) {
      file.addEventListener("change", function () {
        if (!file.files || !file.files.length) { return; }
        var reader = new FileReader();
        reader.onload = function () { payload.value = String(reader.result); fire(payload, "input"); };
        reader.readAsText(file.files[0]);
      });
    }
    var reset = $("#payload-default");
    if (reset) {
      reset.addEventListener("click", function () {
        payload.value = JSON.stringify(JSON.parse(payload.getAttribute("data-default") || "{}"), null, 2);
        fire(payload, "input");
      });
    }
  }

  /* -- CREATE stays disabled until the required fields are filled --------- */
  function setupCreate() {
    var form = $("#editor"), button = $("#create-button");
    if (!form || !button) { return; }
    function update() {
      var ready = ["#job", "#name", "#status", "#cron"].every(function (selector) {
        var field = $(selector); return field && field.value.trim() !== "";
      });
      button.disabled = !ready;
      updateSeed();
    }
    form.addEventListener("input", update);
    form.addEventListener("change", update);
    update();
  }


  /* -- time display: UTC (the default) / the browser's zone / each schedule's zone --
     One zone per page, named in each time column's header ([data-zone-label]). The
     server writes UTC; a <time data-fixed> is about its own zone's wall clock (a
     cron's next runs, named in its header) and is left alone. */
  var TIME_KEY = "cronplane.time-display.";
  function timeMode() {
    var select = $("#time-display");
    if (!select) { return "utc"; }
    try { return localStorage.getItem(TIME_KEY + select.getAttribute("data-user")) || "utc"; } catch (e) { return "utc"; }
  }
  function formatIn(date, zone, form) {
    var parts = {};
    new Intl.DateTimeFormat("en-GB", {
      timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit",
      minute: "2-digit", second: "2-digit", hourCycle: "h23", timeZoneName: "short"
    }).formatToParts(date).forEach(function (part) { parts[part.type] = part.value; });
    var clock = parts.hour + ":" + parts.minute + (form === "seconds" ? ":" + parts.second : "") +
      " " + (zone === "UTC" ? "UTC" : parts.timeZoneName);
    return form === "time" ? clock : parts.year + "-" + parts.month + "-" + parts.day + " " + clock;
  }
  function showTimes(root) {
    var mode = timeMode();
    var browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
    $all("time[datetime][data-zone]", root).forEach(function (time) {
      if (time.hasAttribute("data-fixed")) { return; }
      if (!time.hasAttribute("data-text")) { time.setAttribute("data-text", time.textContent); }
      if (mode === "utc") { time.textContent = time.getAttribute("data-text"); return; }
      if (mode === "schedule") { time.textContent = time.getAttribute("data-local") || time.getAttribute("data-text"); return; }
      try {
        time.textContent = formatIn(new Date(time.getAttribute("datetime")), browserZone, time.getAttribute("data-form"));
      } catch (e) { time.textContent = time.getAttribute("data-text"); }
    });
    var label = mode === "browser" ? "(" + browserZone + ")" : mode === "schedule" ? "(each row's zone)" : "(UTC)";
    $all("[data-zone-label]", root).forEach(function (span) { span.textContent = label; });
  }
  function setupTimeSwitch() {
    var select = $("#time-display");
    if (!select) { return; }
    var browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
    var browser = $("option[value=browser]", select);
    if (browser) { browser.textContent = "this browser's zone (" + browserZone + ")"; }
    select.value = timeMode();
    select.addEventListener("change", function () {
      try { localStorage.setItem(TIME_KEY + select.getAttribute("data-user"), select.value); } catch (e) { /* private mode */ }
      showTimes(document);
    });
    showTimes(document);
    document.body.addEventListener("htmx:afterSettle", function (event) {
      showTimes(event.target && event.target.parentNode ? event.target.parentNode : document);
    });
  }

  /* -- the zone picker: a filter over the long list of IANA names --------- */
  function setupZoneFilter() {
    var filter = $("#zone-filter"), select = $("#timezone");
    if (!filter || !select) { return; }
    filter.addEventListener("input", function () {
      var needle = filter.value.trim().toLowerCase().replace(/\s+/g, "_");
      var first = null;
      $all("option", select).forEach(function (option) {
        var match = needle === "" || option.value.toLowerCase().indexOf(needle) >= 0;
        option.hidden = !match;
        if (match && !first) { first = option; }
      });
      var current = select.options[select.selectedIndex];
      if (first && (!current || current.hidden)) { select.value = first.value; fire(select, "change"); }
    });
  }

  /* -- listing: Run on a row (confirmed), bulk Enable/Disable ------------- */
  function setupListing() {
    var runDialog = $("#run-dialog");
    if (runDialog && $("form[hx-post='/ui/run']", runDialog)) {
      document.addEventListener("click", function (event) {
        var button = event.target.closest("[data-run-row]");
        if (!button) { return; }
        var form = $("form", runDialog);
        ["stack", "environment", "name"].forEach(function (field) {
          form.elements[field].value = button.getAttribute("data-" + field);
        });
        $("[data-run-name]", runDialog).textContent = button.getAttribute("data-name");
        runDialog.showModal();
      });
    }
    var boxes = $all("[data-select-row]"), all = $("#select-all"), bulkDialog = $("#bulk-dialog");
    if (!boxes.length || !bulkDialog) { return; }
    function chosen() { return boxes.filter(function (box) { return box.checked; }); }
    function update() {
      var count = chosen().length;
      $("#bulk-count").textContent = count ? count + " selected" : "No schedule selected";
      $all("[data-bulk]").forEach(function (button) { button.disabled = count === 0; });
      if (all) { all.checked = count === boxes.length; all.indeterminate = count > 0 && count < boxes.length; }
    }
    boxes.forEach(function (box) { box.addEventListener("change", update); });
    if (all) {
      all.addEventListener("change", function () {
        boxes.forEach(function (box) { box.checked = all.checked; });
        update();
      });
    }
    $all("[data-bulk]").forEach(function (button) {
      button.addEventListener("click", function () {
        var verb = button.getAttribute("data-bulk"), label = verb === "enable" ? "Enable" : "Disable";
        var names = chosen().map(function (box) { return box.closest("tr").getAttribute("data-name"); });
        $("[data-bulk-verb]", bulkDialog).textContent = label;
        $("[data-bulk-count]", bulkDialog).textContent = String(names.length);
        $("[data-bulk-names]", bulkDialog).textContent = names.join(", ");
        var confirm = $("#bulk-confirm");
        confirm.value = verb;
        confirm.textContent = label + " " + names.length;
        bulkDialog.showModal();
      });
    });
    update();
  }

  function start() {
    setupTabs();
    setupDialogs();
    setupPicker();
    setupPresets();
    setupPayload();
    setupCreate();
    setupZoneFilter();
    setupListing();
    setupTimeSwitch();
  }
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", start); } else { start(); }
}());
