"""The hub's stylesheet and script: small, dependency-free, served by the app itself (no CDN: it works offline)."""

CSS = """
:root{--fg:#1d2330;--mut:#5b6475;--bg:#f6f7fb;--card:#fff;--line:#dde1ea;--acc:#2f5fd0;--ok:#16743f;--bad:#c0392b;
--w:#4e79a7;--kv:#f28e2b;--st:#59a89c;--cp:#e15759;--ov:#9c6fb6;--free:#e4e7ee}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,Ubuntu,sans-serif;color:var(--fg);
background:var(--bg)}
header{background:#18213a;color:#fff;padding:.6rem 1rem;display:flex;flex-wrap:wrap;gap:.4rem 1.2rem;
align-items:center}
header .brand{font-weight:700;font-size:1.1rem;color:#fff;text-decoration:none;margin-right:.5rem}
header nav{display:flex;flex-wrap:wrap;gap:.2rem .9rem}
header nav a{color:#c9d4f2;text-decoration:none;font-size:.93rem;padding:.1rem 0}
header nav a.on,header nav a:hover{color:#fff;border-bottom:2px solid #7fa2ff}
main{max-width:1120px;margin:0 auto;padding:1rem}
h1{font-size:1.45rem;margin:.4rem 0 .8rem;overflow-wrap:anywhere}
h2{font-size:1.15rem;margin:1.4rem 0 .6rem}
h3{font-size:1rem;margin:1rem 0 .4rem}
p.lead{color:var(--mut);margin-top:-.4rem}
.card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:1rem 1.1rem;margin:0 0 1rem}
form.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(190px,1fr));gap:.6rem .9rem;align-items:end}
form.grid .wide{grid-column:1/-1}
label.check{display:flex;gap:.4rem;align-items:center;font-size:.85rem;color:var(--fg)}
label.check input{width:auto}
label{display:block;font-size:.82rem;color:var(--mut);margin-bottom:.15rem}
input,select,textarea{width:100%;font:inherit;font-size:.95rem;padding:.42rem .5rem;border:1px solid #c5cbd8;
border-radius:6px;background:#fff;color:var(--fg)}
textarea{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.85rem}
button,.btn{font:inherit;background:var(--acc);color:#fff;border:0;border-radius:6px;padding:.48rem 1rem;
cursor:pointer;text-decoration:none;display:inline-block}
button.small{padding:.2rem .6rem;font-size:.82rem;background:#5b6475}
.verdict{font-size:1.15rem;font-weight:600;padding:.6rem .9rem;border-radius:8px;margin-bottom:.8rem;
overflow-wrap:anywhere}
.verdict.ok{background:#e5f5ec;color:var(--ok)}.verdict.bad{background:#fbe9e7;color:var(--bad)}
.verdict.unknown{background:#eef1f7;color:var(--mut)}
.error{background:#fbe9e7;color:var(--bad);border:1px solid #f0c2bc;border-radius:8px;padding:.7rem .9rem;
margin-bottom:1rem;overflow-wrap:anywhere}
.note{color:var(--mut);font-size:.88rem}
li,p,dd,h3{overflow-wrap:anywhere}
.notes li{color:var(--mut);font-size:.88rem}
.scroll{overflow-x:auto;-webkit-overflow-scrolling:touch}
table{border-collapse:collapse;width:100%;font-size:.9rem}
th,td{padding:.32rem .55rem;border-bottom:1px solid var(--line);text-align:right;white-space:nowrap}
th{font-weight:600;color:var(--mut);font-size:.8rem;text-transform:none}
td.l,th.l{text-align:left}
td.wrap{white-space:normal}#limits td.wrap{min-width:7.5rem}
tr.no td{color:var(--mut)}
td.yes{color:var(--ok)}td.nofit{color:var(--mut)}
pre,code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.85rem}
pre.view{font-size:.75rem;margin:0}
pre{background:#f1f3f8;border:1px solid var(--line);border-radius:6px;padding:.6rem .7rem;overflow-x:auto;
white-space:pre-wrap;overflow-wrap:anywhere;margin:.3rem 0}
.cmd{display:flex;gap:.5rem;align-items:flex-start}.cmd pre{flex:1;margin:0}
.kv{display:grid;grid-template-columns:max-content 1fr;gap:.15rem 1rem;font-size:.9rem}
.kv dt{color:var(--mut)}.kv dd{margin:0;overflow-wrap:anywhere;min-width:0}
.bar{margin:.2rem 0 .8rem}.bar .lab{display:flex;justify-content:space-between;font-size:.85rem;flex-wrap:wrap;
gap:.2rem 1rem}
.legend{display:flex;flex-wrap:wrap;gap:.3rem 1rem;font-size:.82rem;color:var(--mut);margin:.3rem 0 .6rem}
.legend i{display:inline-block;width:.8rem;height:.8rem;border-radius:2px;vertical-align:-1px;margin-right:.3rem}
.stats{display:grid;grid-template-columns:repeat(auto-fill,minmax(150px,1fr));gap:.6rem;margin:.6rem 0}
.stat{background:#f1f3f8;border-radius:8px;padding:.5rem .7rem}.stat>b{display:block;font-size:1.2rem}
.stat>span{font-size:.78rem;color:var(--mut)}
.tag{display:inline-block;background:#eef1f7;border-radius:4px;padding:0 .4rem;font-size:.8rem;color:var(--mut)}
ul.errs{list-style:none;padding:0;margin:0}ul.errs li{padding:.5rem 0;border-bottom:1px solid var(--line)}
ul.errs code{overflow-wrap:anywhere;white-space:normal}
svg text{font-family:system-ui,sans-serif}
details summary{cursor:pointer;color:var(--acc)}
.card>h2:first-child,.card>div>h2:first-child{margin-top:0}
.narrow-only{display:none}
.option{border-top:1px solid var(--line);padding:.6rem 0}.option .kv{margin:.3rem 0}
.skip{position:absolute;left:-9999px;top:.4rem;background:#fff;color:var(--acc);padding:.3rem .6rem;
border-radius:6px;z-index:2}.skip:focus{left:.5rem}main:focus,#answer:focus{outline:none}
footer{max-width:1120px;margin:1.5rem auto;padding:0 1rem;color:var(--mut);font-size:.8rem}
@media (max-width:640px){
 body{font-size:14px}main{padding:.6rem}.card{padding:.75rem .7rem}
 header{padding:.5rem .6rem}header nav{gap:.1rem .7rem}header nav a{font-size:.86rem}
 form.grid{grid-template-columns:1fr 1fr;gap:.5rem .6rem}
 h1{font-size:1.2rem}.kv{grid-template-columns:minmax(0,38%) minmax(0,1fr);gap:.2rem .6rem}
 .kv dt{overflow-wrap:anywhere}.stats{grid-template-columns:1fr 1fr}
 .cmd{flex-direction:column}
 .wide-only{display:none}.narrow-only{display:block}
}
"""

JS = """
(function(){
  // a page that answers its form (pages.answer): the focus on the answer, scrolled into view, so that a phone shows
  // the verdict and the next Tab goes on from it (a link in an error, the figures) rather than from the page's top
  var ans=document.getElementById('answer');
  if(ans&&!location.hash){ans.focus({preventScroll:true});ans.scrollIntoView({block:'start'});}
  document.querySelectorAll('button[data-copy]').forEach(function(b){
    b.addEventListener('click',function(){
      var t=document.getElementById(b.getAttribute('data-copy')).textContent;
      function done(){b.textContent='copied';setTimeout(function(){b.textContent='copy';},1500);}
      if(navigator.clipboard&&window.isSecureContext){navigator.clipboard.writeText(t).then(done,function(){});}
      else{var a=document.createElement('textarea');a.value=t;document.body.appendChild(a);a.select();
        try{document.execCommand('copy');done();}catch(e){}document.body.removeChild(a);}
    });
  });
  var mi=document.getElementById('f-model'),dl=document.getElementById('models'),timer=null;
  if(mi&&dl){mi.addEventListener('input',function(){clearTimeout(timer);var q=mi.value.trim();if(q.length<2){return;}
    timer=setTimeout(function(){fetch('/api/models?q='+encodeURIComponent(q)).then(function(r){return r.ok?r.json():[];})
      .then(function(rows){var seen={},opts=[];rows.slice(0,40).forEach(function(r){
        [r.name,r.hf_id].concat(r.aliases||[]).forEach(function(n){if(n&&!seen[n]&&opts.length<200){seen[n]=1;
          var o=document.createElement('option');o.value=n;opts.push(o);}});});
        if(opts.length){dl.replaceChildren.apply(dl,opts);}}).catch(function(){});},150);});}
  var up=document.getElementById('f-config');
  if(up){up.addEventListener('change',function(){var file=up.files&&up.files[0];if(!file){return;}
    if(file.size>1000000){alert('the config is larger than 1 MB');up.value='';return;}
    var r=new FileReader();r.onload=function(){var form=up.form;
      var t=document.getElementById('f-config-text');t.disabled=false;t.value=r.result;form.method='post';
      var m=document.getElementById('f-model');if(m){m.value='';}
      form.submit();};r.readAsText(file);});}
  // a shared URL holds only what was typed: blank fields are left out (but the one a form needs, so the page
  // can say it is missing)
  // a field past what the server takes is said at once: sent, a long paste makes a URL that the server (over
  // 64 KB) or the browser (over 2 MB) refuses without a word of the hub's
  document.querySelectorAll('form').forEach(function(form){form.addEventListener('submit',function(ev){
    var over=Array.prototype.filter.call(form.elements,function(el){var n=parseInt(el.getAttribute('data-max')||'0',10);
      return n&&el.value&&el.value.length>n;})[0];
    var box=form.parentNode.querySelector('.error.too-long');if(box){box.remove();}
    if(!over){return;}
    ev.preventDefault();ev.stopImmediatePropagation();
    box=document.createElement('div');box.className='error too-long';box.setAttribute('role','alert');
    var name={text:'the log',command:'the command',fit_command:'the command'}[over.name]||over.name;
    box.textContent='Cannot answer: '+name+' is '+over.value.length.toLocaleString('en-US')+
      ' characters long; this hub takes up to '+parseInt(over.getAttribute('data-max'),10).toLocaleString('en-US')+
      (over.name==='text'?': paste the part of the log around the first error':': shorten it');
    form.parentNode.insertBefore(box,form.nextSibling);over.focus();},true);});
  document.querySelectorAll('form[method=get]').forEach(function(form){form.addEventListener('submit',function(){
    var need=form.getAttribute('data-need');
    Array.prototype.forEach.call(form.elements,function(el){
      if(el.name&&el.name!==need&&(el.tagName==='TEXTAREA'||el.type==='text'||el.type==='hidden')&&!el.value.trim()){
        el.disabled=true;}});
    setTimeout(function(){Array.prototype.forEach.call(form.elements,function(el){
      if(el.id!=='f-config-text'){el.disabled=false;}});},0);});});
  // a form sent says so on its button until the answer comes (a plan of a model far larger than the GPU takes
  // some 10 s, the page unchanged meanwhile); the page shown again from the back button has its labels back
  document.querySelectorAll('form').forEach(function(form){form.addEventListener('submit',function(ev){
    var b=form.querySelector('button[type=submit]');
    if(ev.defaultPrevented||!b||b.hasAttribute('data-label')){return;}
    b.setAttribute('data-label',b.textContent);b.textContent='Working\u2026';form.setAttribute('aria-busy','true');});});
  window.addEventListener('pageshow',function(){
    document.querySelectorAll('button[data-label]').forEach(function(b){b.textContent=b.getAttribute('data-label');
      b.removeAttribute('data-label');b.form&&b.form.removeAttribute('aria-busy');});});
  // the fields the page filled from a pasted command (data-filled) describe that command: once it is edited, those
  // still as filled are cleared (the server reads the new command's own; a field typed over is kept and checked)
  var pasted=document.getElementById('f-command');
  if(pasted){pasted.addEventListener('input',function(){
    document.querySelectorAll('[data-filled]').forEach(function(el){
      if(el.value===el.getAttribute('data-filled')){el.value='';}el.removeAttribute('data-filled');});});}
  // Ctrl+Enter (Cmd+Enter on a Mac) in a pasted command or log sends its form, as Enter sends from a field: Enter
  // alone there starts a new line, and a keyboard would otherwise Tab on to the button
  document.querySelectorAll('form textarea').forEach(function(t){t.addEventListener('keydown',function(ev){
    if(ev.key==='Enter'&&(ev.ctrlKey||ev.metaKey)&&t.form){ev.preventDefault();
      if(t.form.requestSubmit){t.form.requestSubmit();}else{t.form.submit();}}});});
  var f=document.getElementById('errfilter');
  if(f){f.addEventListener('input',function(){var q=f.value.toLowerCase().split(/\\s+/).filter(Boolean);
    document.querySelectorAll('ul.errs li').forEach(function(li){var h=li.getAttribute('data-search')||'';
      li.style.display=q.every(function(w){return h.indexOf(w)>=0;})?'':'none';});
    var n=document.getElementById('errcount');if(n){var all=n.getAttribute('data-total'),
      shown=document.querySelectorAll('ul.errs li:not([style*="none"])').length;
      n.textContent=(q.length?shown+' of ':'')+all+' known message'+(all==='1'?'':'s');}});}
  var m=document.getElementById('machine');
  if(m){
    function mib(n){return n==null?'-':(n/1048576).toLocaleString('en-US',{maximumFractionDigits:0})+' MiB';}
    function tick(){fetch('/api/gpus?processes=1').then(function(r){return r.json();}).then(function(d){
      (d.gpus||[]).forEach(function(g,i){var c=document.getElementById('free-'+i);if(c){c.textContent=mib(g.free_bytes);
        c.setAttribute('data-bytes',g.free_bytes);}});
      if(d.host){var h=document.getElementById('host-avail');if(h){h.textContent=mib(d.host.available_bytes);
        h.setAttribute('data-bytes',d.host.available_bytes);}}
      var s=document.getElementById('updated');if(s){s.textContent=new Date().toLocaleTimeString();}
    }).catch(function(){});}
    setInterval(tick,parseInt(m.getAttribute('data-every')||'3000',10));
  }
})();
"""
