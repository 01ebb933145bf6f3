"""The local arXiv's corpus for the export-style lookup tests (tests/fixtures/bib/lookup/), and
what each entry of those files must become.

`REAL` are real papers as arXiv stores them: the title as submitted (no BibTeX braces, TeX
accents left in where authors typed them), authors as arXiv lists them (Unicode or plain
spellings, family name first for some, collaborations as one name), and the date of the first
version, often years before the journal's. `DECOYS` are made up (their ids are invented) to be
what a wrong rule would take: a later paper with the same title and one shared surname, a
paper whose author's *given* name is the entry author's surname (Kim, Lee, James, Thomas,
Scott), a retitled v2, and "X: a survey" beside an entry titled "X".
"""

from __future__ import annotations

from support.arxiv_server import Paper
from support.paths import FIXTURES

REAL = [
    Paper("1512.03385", "Deep Residual Learning for Image Recognition",
          ["Kaiming He", "Xiangyu Zhang", "Shaoqing Ren", "Jian Sun"], "2015-12-10T19:51:55Z",
          category="cs.CV"),
    Paper("1412.6980", "Adam: A Method for Stochastic Optimization",
          ["Diederik P. Kingma", "Jimmy Ba"], "2014-12-22T13:54:29Z", version=9,
          category="cs.LG"),
    # NeurIPS printed it as "Generative Adversarial Nets": arXiv's title is another one
    Paper("1406.2661", "Generative Adversarial Networks",
          ["Ian J. Goodfellow", "Jean Pouget-Abadie", "Mehdi Mirza", "Bing Xu",
           "David Warde-Farley", "Sherjil Ozair", "Aaron Courville", "Yoshua Bengio"],
          "2014-06-10T18:58:17Z", category="stat.ML"),
    Paper("1409.0473", "Neural Machine Translation by Jointly Learning to Align and Translate",
          ["Dzmitry Bahdanau", "Kyunghyun Cho", "Yoshua Bengio"], "2014-09-01T16:33:02Z",
          version=7),
    Paper("2005.14165", "Language Models are Few-Shot Learners",
          ["Tom B. Brown", "Benjamin Mann", "Nick Ryder", "Melanie Subbiah", "Jared Kaplan",
           "Prafulla Dhariwal", "Arvind Neelakantan", "Pranav Shyam", "Girish Sastry",
           "Amanda Askell"], "2020-05-28T17:29:03Z", version=4),
    Paper("1706.03762", "Attention Is All You Need",
          ["Ashish Vaswani", "Noam Shazeer", "Niki Parmar", "Jakob Uszkoreit", "Llion Jones",
           "Aidan N. Gomez", "Lukasz Kaiser", "Illia Polosukhin"], "2017-06-12T17:57:34Z",
          version=7),
    Paper("1910.10683", "Exploring the Limits of Transfer Learning with a Unified Text-to-Text "
          "Transformer", ["Colin Raffel", "Noam Shazeer", "Adam Roberts", "Katherine Lee",
                          "Sharan Narang", "Michael Matena", "Yanqi Zhou", "Wei Li",
                          "Peter J. Liu"], "2019-10-23T17:37:36Z", version=4, category="cs.LG"),
    Paper("1907.11692", "RoBERTa: A Robustly Optimized BERT Pretraining Approach",
          ["Yinhan Liu", "Myle Ott", "Naman Goyal", "Jingfei Du", "Mandar Joshi", "Danqi Chen",
           "Omer Levy", "Mike Lewis", "Luke Zettlemoyer", "Veselin Stoyanov"],
          "2019-07-26T17:48:29Z"),
    Paper("1812.08434", "Graph Neural Networks: A Review of Methods and Applications",
          ["Jie Zhou", "Ganqu Cui", "Shengding Hu", "Zhengyan Zhang", "Cheng Yang",
           "Zhiyuan Liu", "Lifeng Wang", "Changcheng Li", "Maosong Sun"],
          "2018-12-20T16:20:40Z", version=6, category="cs.LG"),
    Paper("1808.05377", "Neural Architecture Search: A Survey",
          ["Thomas Elsken", "Jan Hendrik Metzen", "Frank Hutter"], "2018-08-16T10:09:11Z",
          version=3, category="stat.ML"),
    Paper("1408.5882", "Convolutional Neural Networks for Sentence Classification",
          ["Yoon Kim"], "2014-08-25T19:46:07Z", version=2),
    Paper("1810.04805", "BERT: Pre-training of Deep Bidirectional Transformers for Language "
          "Understanding", ["Jacob Devlin", "Ming-Wei Chang", "Kenton Lee", "Kristina Toutanova"],
          "2018-10-11T00:50:01Z", version=2),
    Paper("1508.07909", "Neural Machine Translation of Rare Words with Subword Units",
          ["Rico Sennrich", "Barry Haddow", "Alexandra Birch"], "2015-08-31T16:37:31Z",
          version=5),
    Paper("1802.05365", "Deep contextualized word representations",
          ["Matthew E. Peters", "Mark Neumann", "Mohit Iyyer", "Matt Gardner",
           "Christopher Clark", "Kenton Lee", "Luke Zettlemoyer"], "2018-02-15T00:05:11Z",
          version=2),
    Paper("1707.07045", "End-to-end Neural Coreference Resolution",
          ["Kenton Lee", "Luheng He", "Mike Lewis", "Luke Zettlemoyer"],
          "2017-07-21T21:40:29Z", version=2),
    Paper("hep-th/9711200", "The Large N Limit of Superconformal Field Theories and "
          "Supergravity", ["Juan M. Maldacena"], "1997-11-27T21:29:36Z", version=3,
          doi="10.1023/A:1026654312961", category="hep-th"),
    # INSPIRE writes "noncritical": arXiv's search does not find it by that word
    Paper("hep-th/9802109", "Gauge Theory Correlators from Non-Critical String Theory",
          ["S.S. Gubser", "I.R. Klebanov", "A.M. Polyakov"], "1998-02-15T23:18:08Z",
          version=2, category="hep-th"),
    Paper("hep-th/0603001", "Holographic Derivation of Entanglement Entropy from AdS/CFT",
          ["Shinsei Ryu", "Tadashi Takayanagi"], "2006-03-01T03:36:22Z", version=3,
          category="hep-th"),
    Paper("1207.7214", "Observation of a new particle in the search for the Standard Model "
          "Higgs boson with the ATLAS detector at the LHC", ["The ATLAS Collaboration"],
          "2012-07-31T15:47:04Z", version=2, category="hep-ex"),
    Paper("1207.7235", "Observation of a new boson at a mass of 125 GeV with the CMS "
          "experiment at the LHC", ["The CMS Collaboration"], "2012-07-31T19:19:48Z",
          version=2, category="hep-ex"),
    Paper("hep-th/9802150", "Anti De Sitter Space And Holography", ["Edward Witten"],
          "1998-02-23T02:32:35Z", version=3, doi="10.4310/ATMP.1998.v2.n2.a2",
          category="hep-th"),
    Paper("1807.06209", "Planck 2018 results. VI. Cosmological parameters",
          ["Planck Collaboration", "N. Aghanim", "Y. Akrami", "M. Ashdown", "J. Aumont",
           "C. Baccigalupi", "M. Ballardini", "A. J. Banday", "R. B. Barreiro"],
          "2018-07-17T18:00:05Z", version=4, category="astro-ph.CO"),
    Paper("astro-ph/9805201", "Observational Evidence from Supernovae for an Accelerating "
          "Universe and a Cosmological Constant",
          ["Adam G. Riess", "Alexei V. Filippenko", "Peter Challis", "Alejandro Clocchiatti",
           "Alan Diercks", "Peter M. Garnavich"], "1998-05-15T21:12:01Z", category="astro-ph"),
    # ADS writes {\ensuremath{\Omega}}, arXiv "Omega"
    Paper("astro-ph/9812133", "Measurements of Omega and Lambda from 42 High-Redshift "
          "Supernovae", ["S. Perlmutter", "G. Aldering", "G. Goldhaber", "R. A. Knop",
                         "P. Nugent"], "1998-12-08T22:28:53Z", category="astro-ph"),
    Paper("astro-ph/0603449", "Wilkinson Microwave Anisotropy Probe (WMAP) Three Year "
          "Results: Implications for Cosmology", ["D. N. Spergel", "R. Bean", "O. Doré"],
          "2006-03-17T03:45:50Z", version=2, category="astro-ph"),
    Paper("math/0404188", "The primes contain arbitrarily long arithmetic progressions",
          ["Ben Green", "Terence Tao"], "2004-04-08T20:14:20Z", version=6,
          category="math.NT"),
    Paper("0801.0446", r"Le lemme fondamental pour les alg\`ebres de Lie", ["Ngo Bao Chau"],
          "2008-01-03T10:53:10Z", version=3, category="math.AG"),
    Paper("0904.2760", "On Landau damping", ["Clément Mouhot", "Cédric Villani"],
          "2009-04-17T18:20:41Z", version=4, category="math.AP"),
    Paper("1311.4600", "Small gaps between primes", ["James Maynard"],
          "2013-11-18T20:42:38Z", version=3, category="math.NT"),
    Paper("math/0409186", "Robust Uncertainty Principles: Exact Signal Reconstruction from "
          "Highly Incomplete Frequency Information",
          ["Emmanuel Candes", "Justin Romberg", "Terence Tao"], "2004-09-10T06:35:20Z",
          category="math.NA"),
    Paper("1111.4914", "Perfectoid spaces", ["Peter Scholze"], "2011-11-21T17:24:52Z",
          version=2, category="math.AG"),
    Paper("1303.5948", "Perfectoid spaces: A survey", ["Peter Scholze"],
          "2013-03-24T12:06:11Z", category="math.AG"),
    Paper("1303.5113", "A theory of regularity structures", ["Martin Hairer"],
          "2013-03-20T21:29:18Z", version=4, category="math.AP"),
]  # fmt: skip

DECOYS = [
    # a later paper with the same title and one shared surname (Tao): fits every rule alone
    Paper("0805.4417", "The primes contain arbitrarily long arithmetic progressions",
          ["Laura Tao"], "2008-05-20T09:00:00Z", category="math.HO"),
    # given names equal to the entry authors' surnames
    Paper("1409.7721", "Convolutional Neural Networks for Sentence Classification",
          ["Kim Anh Nguyen", "Thanh Binh Tran"], "2014-09-26T10:00:00Z"),
    Paper("1707.09912", "End-to-end neural coreference resolution",
          ["Lee Chen"], "2017-07-30T10:00:00Z"),
    Paper("physics/9906017", "Learning the parts of objects by non-negative matrix "
          "factorization", ["Lee Ann Walker"], "1999-06-09T10:00:00Z", category="physics.data-an"),
    Paper("1306.6651", "An Introduction to Statistical Learning",
          ["James Holloway", "Priya Raman"], "2013-06-27T10:00:00Z", category="stat.ML"),
    Paper("cs/0604021", "Elements of Information Theory", ["Thomas Hale"],
          "2006-04-06T10:00:00Z", category="cs.IT"),
    Paper("1902.08813", "Gauge fields on the lattice", ["Scott Mercer"],
          "2019-02-23T10:00:00Z", category="hep-lat"),
    Paper("1310.5577", "Deterministic Coreference Resolution Based on Entity-Centric, "
          "Precision-Ranked Rules", ["Lee Morgan"], "2013-10-21T10:00:00Z"),
    # a retitled v2: its v1 bore T5's title, its v2 another one
    Paper("1910.14227", "Exploring the Limits of Transfer Learning with a Unified Text-to-Text "
          "Transformer: Extended Version", ["Colin Raffel", "Noam Shazeer"],
          "2019-10-31T10:00:00Z", version=2, category="cs.LG"),
]  # fmt: skip

PAPERS = REAL + DECOYS

#: Export style -> fixture file.
STYLES = {
    "Google Scholar": "google-scholar.bib",
    "DBLP": "dblp.bib",
    "ACL Anthology": "acl-anthology.bib",
    "Zotero + Better BibTeX": "zotero-better-bibtex.bib",
    "INSPIRE": "inspire.bib",
    "NASA ADS": "nasa-ads.bib",
    "MathSciNet": "mathscinet.bib",
}

#: For every entry without an identifier in its file: the arXiv id of its paper, or None when
#: the paper is not on arXiv (then any id would be wrong).
ON_ARXIV: dict[str, str | None] = {
    # Google Scholar
    "he2016deep": "1512.03385",
    "goodfellow2014generative": "1406.2661",  # arXiv's title is another: not findable
    "bahdanau2015neural": "1409.0473",
    "james2013introduction": None,  # a book; decoy: James Holloway
    "lee1999learning": None,  # Nature; decoy: Lee Ann Walker
    "brown2020language": "2005.14165",
    # DBLP
    "DBLP:conf/nips/VaswaniSPUJGKP17": "1706.03762",
    "DBLP:conf/cvpr/HeZRS16": "1512.03385",
    "DBLP:journals/jmlr/RaffelSRLNMZLL20": "1910.10683",  # decoy: a retitled v2
    "DBLP:journals/aiopen/ZhouCHZYLWLS20": "1812.08434",  # arXiv two years before
    "DBLP:series/ssml/ElskenMH19": None,  # the chapter; arXiv has "...: A Survey"
    # ACL Anthology
    "kim-2014-convolutional": "1408.5882",  # decoy: Kim Anh Nguyen
    "devlin-etal-2019-bert": "1810.04805",
    "sennrich-etal-2016-neural": "1508.07909",
    "peters-etal-2018-deep": "1802.05365",
    "lee-etal-2017-end": "1707.07045",  # decoy: Lee Chen
    "lee-etal-2013-deterministic": None,  # decoy: Lee Morgan
    "papineni-etal-2002-bleu": None,
    # Zotero + Better BibTeX
    "devlinBERTPretrainingDeep2019": "1810.04805",
    "hochreiterLongShortTermMemory1997": None,
    "silverMasteringGameGo2016": None,
    "coverElementsInformationTheory2006": None,  # decoy: Thomas Hale
    "scottGaugeFieldsLattice2019": None,  # decoy: Scott Mercer
    "sennrichNeuralMachineTranslation2016": "1508.07909",
    # INSPIRE
    "Gubser:1998bc": "hep-th/9802109",  # "noncritical" vs "Non-Critical": not findable
    "Ryu:2006bv": "hep-th/0603001",
    "ATLAS:2012yve": "1207.7214",
    "CMS:2012qbp": "1207.7235",
    "tHooft:1973alw": None,
    # NASA ADS
    "2020A&A...641A...6P": "1807.06209",
    "1998AJ....116.1009R": "astro-ph/9805201",
    "1999ApJ...517..565P": "astro-ph/9812133",
    "1929PNAS...15..168H": None,
    # MathSciNet
    "MR2415383": "math/0404188",  # four years before, and a decoy: ambiguous
    "MR2653248": "0801.0446",
    "MR2877065": "0904.2760",
    "MR3272929": "1311.4600",
    "MR2236378": "math/0409186",
    "MR3090258": "1111.4914",  # beside "Perfectoid spaces: A survey"
    "MR3274562": "1303.5113",
    "MR0705527": None,
}

#: Entries that carry their identifier in the file (not looked up): key -> id.
DECLARED = {
    "kingma2014adam": "1412.6980",
    "DBLP:journals/corr/abs-1907-11692": "1907.11692",
    "Maldacena:1997re": "hep-th/9711200",
    "Witten:1998qj": "hep-th/9802150",
    "2007ApJS..170..377S": "astro-ph/0603449",
}


SCHOLAR = FIXTURES / "bib" / "google-scholar-lookup.bib"
"""A Google Scholar export whose entries the lookup tests resolve against SCHOLAR_PAPERS."""

#: What the local arXiv knows for SCHOLAR: the real papers of the fixture, and near misses.
SCHOLAR_PAPERS = [
    Paper("1706.03762", "Attention Is All You Need",
          ["Ashish Vaswani", "Noam Shazeer", "Niki Parmar", "Jakob Uszkoreit", "Llion Jones",
           "Aidan N. Gomez", "Lukasz Kaiser", "Illia Polosukhin"],
          "2017-06-12T17:57:34Z", version=7),
    Paper("1810.04805", "BERT: Pre-training of Deep Bidirectional Transformers for Language "
          "Understanding", ["Jacob Devlin", "Ming-Wei Chang", "Kenton Lee", "Kristina Toutanova"],
          "2018-10-11T00:50:01Z", version=2),
    Paper("hep-th/9802150", "Anti De Sitter Space And Holography", ["Edward Witten"],
          "1998-02-23T02:32:35Z", version=3, doi="10.4310/ATMP.1998.v2.n2.a2",
          category="hep-th"),
    Paper("hep-th/9711200", "The Large N Limit of Superconformal Field Theories and "
          "Supergravity", ["Juan M. Maldacena"], "1997-11-27T21:29:36Z", version=3,
          doi="10.1023/A:1026654312961", category="hep-th"),
    Paper("2101.01169", "Transformers in Vision: A Survey",
          ["Salman Khan", "Muzammal Naseer", "Munawar Hayat", "Syed Waqas Zamir",
           "Fahad Shahbaz Khan", "Mubarak Shah"], "2021-01-04T18:57:24Z", version=5),
    Paper("1807.07987", "Deep Learning", ["Nicholas G. Polson", "Vadim O. Sokolov"],
          "2018-07-20T17:28:52Z", version=2, category="stat.ML"),
    Paper("1810.06339", "Deep Reinforcement Learning", ["Yuxi Li"], "2018-10-15T01:13:46Z"),
    Paper("1701.07274", "Deep Reinforcement Learning: An Overview", ["Yuxi Li"],
          "2017-01-25T21:57:04Z", version=6),
]  # fmt: skip
