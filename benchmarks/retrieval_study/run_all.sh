#!/bin/sh
# Re-run every experiment; logs go to results/. Needs cache/ embeddings (embed_m2v.py, embed_e5.py).
set -e
cd "$(dirname "$0")/../.." && . .venv/bin/activate && cd benchmarks/retrieval_study
python bm25_base.py > results/01_bm25_base.txt
python bm25_variants.py > results/02_bm25_variants.txt
python bm25_expand.py > results/03_bm25_expand.txt
python bm25_grid.py > results/04_bm25_grid.txt
python kw_smooth.py > results/05_kw_smooth.txt
python kw_smooth2.py > results/06_kw_smooth_directional.txt
python kw_query.py > results/07_kw_query.txt
python kw_speaker.py > results/08_kw_speaker.txt
python kw_misc.py > results/09_kw_misc.txt
python kw_apos.py > results/10_kw_apostrophe.txt
python dense_alone.py > results/11_dense_alone.txt
python fusion_exp.py plain m2v 50 > results/12_fusion_plain_m2v.txt
python fusion_exp.py plain e5 50 > results/13_fusion_plain_e5.txt
python fusion_exp.py exp m2v 50 > results/14_fusion_exp_m2v.txt
python fusion_exp.py exp e5 50 > results/15_fusion_exp_e5.txt
python fusion_exp.py exp m2v 50 1.0 > results/16_fusion_exp_m2v_spk.txt
python fusion_exp.py exp m2vprev 50 1.0 > results/17_fusion_exp_m2vprev_spk.txt
python fusion2.py > results/18_fusion2.txt
python loco.py m2v > results/19_loco_m2v.txt
python loco.py e5 > results/20_loco_e5.txt
python final_eval.py > results/21_final_eval.txt
