// Browser checks of `aiprof view --topology` pages (run by check_page.js).
// With env AIPROF_HOSTILE set, the page was made from test/browser/topology/
// hostile_trace.json (hand-made) and the hostile name must stay text.
module.exports = async (t) => {
  const data = await t.page.evaluate(() => JSON.parse(document.getElementById('topology-data').textContent));
  const leaves = data.nodes.filter((n) => !n.cluster);
  await t.check('every node and edge of the graph is drawn', async () => {
    t.assert.ok(leaves.length > 0 && data.edges.length > 0, 'graph has nodes and edges');
    const drawn = await t.page.evaluate(() => ({
      nodes: document.querySelectorAll('#graph g.node').length,
      edges: document.querySelectorAll('#graph g.edge').length,
      clusters: document.querySelectorAll('#graph g.cluster').length,
    }));
    t.assert.equal(drawn.nodes, leaves.length);
    t.assert.equal(drawn.edges, data.edges.length);
    t.assert.equal(drawn.clusters, data.nodes.length - leaves.length);
  });
  await t.check('hovering a node shows its details', async () => {
    const node = leaves[0];
    await t.page.hover(`#graph g.node[id="${node.id}"]`);
    const shown = await t.page.evaluate(() => ({
      title: document.querySelector('#details h2').textContent,
      rows: document.querySelectorAll('#details dt').length,
    }));
    t.assert.equal(shown.title, node.label);
    t.assert.equal(shown.rows, node.details.length);
  });
  await t.check('hovering an edge names both ends', async () => {
    const edge = data.edges[0];
    const from = data.nodes.find((n) => n.id === edge.from), to = data.nodes.find((n) => n.id === edge.to);
    await t.page.evaluate((id) => {
      document.getElementById(id).dispatchEvent(new MouseEvent('mouseenter'));
    }, edge.id);
    const title = await t.page.evaluate(() => document.querySelector('#details h2').textContent);
    t.assert.equal(title, `${from.label} \u2192 ${to.label}`);
  });
  await t.check('clicking a node dims what it does not touch; clicking the background resets', async () => {
    const edge = data.edges[0];
    await t.page.evaluate((id) => document.getElementById(id).dispatchEvent(new MouseEvent('click', {bubbles: true})),
        edge.from);
    const dimmed = await t.page.evaluate(() => document.querySelectorAll('#graph g.dim').length);
    const touching = new Set([edge.from]);
    data.edges.forEach((e) => {
      if (e.from === edge.from || e.to === edge.from) touching.add(e.id).add(e.from).add(e.to);
    });
    t.assert.equal(dimmed, leaves.length + data.edges.length - touching.size);
    t.assert.ok(await t.page.evaluate((id) => !document.getElementById(id).classList.contains('dim'), edge.id));
    await t.page.evaluate(() => document.getElementById('graph').dispatchEvent(new MouseEvent('click')));
    t.assert.equal(await t.page.evaluate(() => document.querySelectorAll('#graph g.dim').length), 0);
  });
  await t.check('the highlighted items are marked', async () => {
    const highlighted = data.nodes.filter((n) => n.highlight);
    const summary = await t.page.evaluate(() => document.getElementById('summary').textContent);
    t.assert.equal(summary.length > 0, highlighted.length > 0);
  });
  // In a narrow window the graph takes the width and the details stay in
  // view at the bottom (trial_views2 V7: at 800 px the graph was scaled into
  // ~440 px beside a 320-px panel, its labels ~4 px high).
  await t.check('at 800 px the graph takes the width and the details stay in view', async () => {
    await t.page.setViewportSize({width: 800, height: 900});
    await t.page.hover(`#graph g.node[id="${leaves[0].id}"]`);
    const r = await t.page.evaluate(() => {
      const svg = document.querySelector('#graph svg').getBoundingClientRect();
      const d = document.getElementById('details').getBoundingClientRect();
      return {svg: svg.width, natural: document.querySelector('#graph svg').viewBox.baseVal.width,
              top: d.top, bottom: d.bottom, view: window.innerHeight};
    });
    t.assert.ok(r.svg >= Math.min(r.natural, 700), `the graph is ${r.svg} px wide (natural ${r.natural})`);
    t.assert.ok(r.top < r.view && r.bottom > 0, `the details panel is out of view (${r.top}..${r.bottom} of ${r.view})`);
    await t.page.setViewportSize({width: 1280, height: 800});
  });
  if (process.env.AIPROF_HOSTILE) {
    await t.check('a hostile name stays text', async () => {
      const hostile = process.env.AIPROF_HOSTILE;
      t.assert.equal(await t.page.evaluate(() => document.querySelectorAll('img, iframe, object').length), 0);
      const node = leaves.find((n) => n.label === hostile);
      t.assert.ok(node, 'the hostile thread is a node');
      await t.page.hover(`#graph g.node[id="${node.id}"]`);
      t.assert.equal(await t.page.evaluate(() => document.querySelector('#details h2').textContent), hostile);
      const svgText = await t.page.evaluate((id) => document.getElementById(id).textContent, node.id);
      t.assert.ok(svgText.includes('<img src=x onerror=alert(1)>'), 'the SVG label shows the name as text');
    });
  }
};
