#!/usr/bin/env python3
"""The longest functions under src/ (default 10): from a function's first line (a line at column 0 that ends with
'{' and holds a '(') to the next '}' at column 0. Run from the repository root, or give a tree's root.

  /usr/bin/python3 bench/function_lengths.py [COUNT] [ROOT]
"""
import re,sys,subprocess,os
# crude: find function bodies starting at a line that ends with '{' at column 0 and ends at '}' at column 0
res=[]
for root,_,files in os.walk(os.path.join(sys.argv[2] if len(sys.argv)>2 else '.','src')):
    for f in files:
        if not f.endswith('.cpp'): continue
        p=os.path.join(root,f)
        lines=open(p).read().split('\n')
        i=0
        while i<len(lines):
            l=lines[i]
            if l and not l[0].isspace() and l.rstrip().endswith('{') and '(' in l and not l.startswith(('namespace','struct','class','enum','extern')):
                j=i+1
                while j<len(lines) and lines[j]!='}': j+=1
                res.append((j-i+1,p,i+1,l.strip()[:80]))
                i=j
            i+=1
res.sort(reverse=True)
for r in res[:int(sys.argv[1]) if len(sys.argv)>1 else 10]: print(r[0], f"{os.path.relpath(r[1], sys.argv[2] if len(sys.argv)>2 else '.')}:{r[2]}", r[3])
